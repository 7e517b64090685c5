-- Spark SQL: cupmon.sql's stragglers view. Per job and minute (by kernel start),
-- the rank whose compute (non-NCCL) kernels ran slowest against the fleet's median
-- for the same kernels (name and launch configuration) in that minute, and the
-- rank with the most compute-busy time.
WITH k AS (
    SELECT job, host, rank, pid, name, grid_x, grid_y, grid_z, block_x, block_y, block_z,
           duration_ns AS d, div(start_ns, 60000000000) AS minute
    FROM kernels
    WHERE duration_ns IS NOT NULL AND collective IS NULL
),
fleet AS (
    SELECT job, minute, name, grid_x, grid_y, grid_z, block_x, block_y, block_z,
           percentile(d, 0.5) AS fleet_median
    FROM k
    GROUP BY job, minute, name, grid_x, grid_y, grid_z, block_x, block_y, block_z
),
per_rank AS (
    SELECT k.job, k.minute, k.host, k.rank, k.pid,
           sum(k.d) AS busy_ns,
           sum(k.d) / sum(f.fleet_median) AS slowdown
    FROM k JOIN fleet f
      ON k.job <=> f.job AND k.minute = f.minute AND k.name = f.name
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
SELECT s.job, s.minute * 60000000000 AS minute_ns, s.ranks,
       s.rank AS slowest_rank, s.host AS slowest_host, s.pid AS slowest_pid, s.slowdown,
       b.rank AS busiest_rank, b.host AS busiest_host, b.pid AS busiest_pid, b.busy_ns AS busiest_ns
FROM ranked s JOIN ranked b ON s.job <=> b.job AND s.minute = b.minute
WHERE s.by_slowdown = 1 AND b.by_busy = 1
ORDER BY s.job, minute_ns
