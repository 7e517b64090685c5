-- ---------------------------------------------------------------------------
-- Views and macros over the base views above (DuckDB 1.1+). Times are Unix ns;
-- ns_to_ts(ns) shows one as a TIMESTAMP (UTC). NCCL kernels are those with a
-- `collective` (the export parses each kernel name with cupmon's NCCL name rules;
-- files of schema version 1 have no such column: their kernels count as compute);
-- everything else is compute.
-- ---------------------------------------------------------------------------

CREATE OR REPLACE MACRO ns_to_ts(ns) AS make_timestamp(CAST(ns // 1000 AS BIGINT));
CREATE OR REPLACE MACRO is_nccl(collective) AS collective IS NOT NULL;
CREATE OR REPLACE MACRO minute_of(ns) AS ns // 60000000000;

-- Kernels whose start is in [from_ns, to_ns).
CREATE OR REPLACE MACRO kernels_between(from_ns, to_ns) AS TABLE
    SELECT * FROM kernels WHERE start_ns >= from_ns AND start_ns < to_ns;

-- GPU time per kernel name and process (a rank is one process): launches, timed
-- launches (duration_ns not NULL, as `cupmon stats` counts them), total, mean,
-- min and max duration, and the share of the process's kernel time.
CREATE OR REPLACE VIEW top_kernels AS
SELECT job, host, rank, pid, name,
       count(*) AS launches,
       count(duration_ns) AS timed,
       CAST(sum(duration_ns) AS BIGINT) AS total_ns,
       avg(duration_ns) AS mean_ns,
       min(duration_ns) AS min_ns,
       max(duration_ns) AS max_ns,
       sum(duration_ns) / sum(sum(duration_ns)) OVER (PARTITION BY job, host, rank, pid) AS share
FROM kernels
GROUP BY job, host, rank, pid, name;

-- The n kernels with the most GPU time of each process.
CREATE OR REPLACE MACRO top_kernels_per_rank(n) AS TABLE
    SELECT * FROM top_kernels
    QUALIFY row_number() OVER (PARTITION BY job, host, rank, pid ORDER BY total_ns DESC NULLS LAST, name) <= n
    ORDER BY rank NULLS LAST, host, pid, total_ns DESC NULLS LAST, name;

-- GPU busy time of each device per minute (cupmon's one definition of busy: copies
-- and memsets are not counted): the union of its kernel intervals (all
-- processes on the device, overlapping kernels counted once), split at minute
-- boundaries. A sweep over start (+1) and end (-1) events: between one event
-- and the next the device is busy when the running count is above zero.
CREATE OR REPLACE VIEW busy_per_minute AS
WITH events AS (
    SELECT job, host, device, start_ns AS t, 1 AS d FROM kernels WHERE duration_ns > 0
    UNION ALL
    SELECT job, host, device, start_ns + duration_ns AS t, -1 AS d FROM kernels WHERE duration_ns > 0
),
levels AS (
    SELECT job, host, device, t, sum(d) OVER w AS running, lead(t) OVER w AS t_next
    FROM events
    WINDOW w AS (PARTITION BY job, host, device ORDER BY t ROWS UNBOUNDED PRECEDING)
),
busy AS (
    SELECT job, host, device, t AS s, t_next AS e
    FROM levels WHERE running > 0 AND t_next > t
),
pieces AS (
    SELECT job, host, device, s, e,
           unnest(range(minute_of(s), minute_of(e - 1) + 1)) AS minute
    FROM busy
)
SELECT job, host, device,
       minute * 60000000000 AS minute_ns,
       ns_to_ts(minute * 60000000000) AS minute_start,
       CAST(sum(least(e, (minute + 1) * 60000000000) - greatest(s, minute * 60000000000)) AS BIGINT) AS busy_ns,
       sum(least(e, (minute + 1) * 60000000000) - greatest(s, minute * 60000000000)) / 60e9 AS busy_fraction
FROM pieces
GROUP BY job, host, device, minute;

-- Per job and minute (by kernel start): the rank whose compute (non-NCCL) kernels
-- ran slowest against the fleet's median for the same kernels in that minute (the
-- same name and launch configuration, so the same work; slowdown = its total time
-- over the fleet medians of its launches), and the rank with the most compute-busy
-- time (the sum of its compute kernels' durations).
CREATE OR REPLACE VIEW stragglers AS
WITH k AS (
    SELECT job, host, rank, pid, name, grid_x, grid_y, grid_z, block_x, block_y, block_z,
           duration_ns AS d, minute_of(start_ns) AS minute
    FROM kernels
    WHERE duration_ns IS NOT NULL AND NOT is_nccl(collective)
),
fleet AS (
    SELECT job, minute, name, grid_x, grid_y, grid_z, block_x, block_y, block_z,
           median(d) AS fleet_median
    FROM k GROUP BY ALL
),
per_rank AS (
    SELECT k.job, k.minute, k.host, k.rank, k.pid,
           CAST(sum(k.d) AS BIGINT) AS busy_ns,
           sum(k.d) / sum(f.fleet_median) AS slowdown
    FROM k JOIN fleet f
      ON k.job IS NOT DISTINCT FROM f.job AND k.minute = f.minute AND k.name = f.name
     AND k.grid_x = f.grid_x AND k.grid_y = f.grid_y AND k.grid_z = f.grid_z
     AND k.block_x = f.block_x AND k.block_y = f.block_y AND k.block_z = f.block_z
    GROUP BY k.job, k.minute, k.host, k.rank, k.pid
),
ranked AS (
    SELECT *,
           row_number() OVER (PARTITION BY job, minute ORDER BY slowdown DESC, rank, host, pid) AS by_slowdown,
           row_number() OVER (PARTITION BY job, minute ORDER BY busy_ns DESC, rank, host, pid) AS by_busy,
           count(*) OVER (PARTITION BY job, minute) AS ranks
    FROM per_rank
)
SELECT s.job, s.minute * 60000000000 AS minute_ns, ns_to_ts(s.minute * 60000000000) AS minute_start,
       s.ranks,
       s.rank AS slowest_rank, s.host AS slowest_host, s.pid AS slowest_pid, s.slowdown,
       b.rank AS busiest_rank, b.host AS busiest_host, b.pid AS busiest_pid, b.busy_ns AS busiest_ns
FROM ranked s JOIN ranked b
  ON s.job IS NOT DISTINCT FROM b.job AND s.minute = b.minute
WHERE s.by_slowdown = 1 AND b.by_busy = 1;

-- NCCL time that overlapped compute, per process and device: the union of its
-- NCCL kernels, of its compute kernels, and of their intersection (a sweep as in
-- busy_per_minute, with a running count per class).
CREATE OR REPLACE VIEW comm_overlap AS
WITH iv AS (
    SELECT job, host, rank, pid, device, start_ns AS s, start_ns + duration_ns AS e,
           CASE WHEN is_nccl(collective) THEN 1 ELSE 0 END AS c
    FROM kernels WHERE duration_ns > 0
),
events AS (
    SELECT job, host, rank, pid, device, s AS t, c AS dc, 1 - c AS dk FROM iv
    UNION ALL
    SELECT job, host, rank, pid, device, e AS t, -c AS dc, c - 1 AS dk FROM iv
),
levels AS (
    SELECT job, host, rank, pid, device, t,
           sum(dc) OVER w AS comm, sum(dk) OVER w AS compute,
           lead(t) OVER w - t AS len
    FROM events
    WINDOW w AS (PARTITION BY job, host, pid, device ORDER BY t ROWS UNBOUNDED PRECEDING)
)
SELECT job, host, rank, pid, device,
       CAST(coalesce(sum(len) FILTER (WHERE comm > 0), 0) AS BIGINT) AS nccl_ns,
       CAST(coalesce(sum(len) FILTER (WHERE compute > 0), 0) AS BIGINT) AS compute_ns,
       CAST(coalesce(sum(len) FILTER (WHERE comm > 0 AND compute > 0), 0) AS BIGINT) AS overlap_ns,
       coalesce(sum(len) FILTER (WHERE comm > 0 AND compute > 0), 0)
           / nullif(sum(len) FILTER (WHERE comm > 0), 0) AS overlap_fraction
FROM levels
GROUP BY job, host, rank, pid, device;

-- One row per dump: its exports folded (rows summed, the latest session facts).
CREATE OR REPLACE VIEW dumps AS
SELECT job, host, rank, local_rank, pid, dump,
       min(first_ns) AS first_ns, max(last_ns) AS last_ns,
       CAST(sum(kernels) AS BIGINT) AS kernels, CAST(sum(memcpy) AS BIGINT) AS memcpy,
       CAST(sum(memset) AS BIGINT) AS memset, CAST(sum(api) AS BIGINT) AS api,
       count(*) AS exports,
       max(end_chunk) AS end_chunk,
       first(dropped_records ORDER BY end_chunk DESC) AS dropped_records,
       first(dropped_records_note ORDER BY end_chunk DESC) AS dropped_records_note,
       first(session_open ORDER BY end_chunk DESC) AS session_open,
       any_value(cupti_version) AS cupti_version,
       any_value(cupti_library) AS cupti_library,
       any_value(recorder_version) AS recorder_version,
       any_value(session_start_unix_ns) AS session_start_unix_ns,
       any_value(world_size) AS world_size,
       any_value(command) AS command,
       CAST(sum(warnings) AS BIGINT) AS warnings
FROM dump_exports
GROUP BY job, host, rank, local_rank, pid, dump;
