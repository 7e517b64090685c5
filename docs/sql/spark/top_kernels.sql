-- Spark SQL: the ${TOP} kernels with the most GPU time of each process (rank), as
-- cupmon.sql's top_kernels_per_rank(${TOP}) in DuckDB.
SELECT job, host, rank, pid, name, launches, timed, total_ns, mean_ns, min_ns, max_ns, share
FROM (
    SELECT job, host, rank, pid, name,
           count(*) AS launches,
           count(duration_ns) AS timed,
           sum(duration_ns) AS total_ns,
           avg(duration_ns) AS mean_ns,
           min(duration_ns) AS min_ns,
           max(duration_ns) AS max_ns,
           sum(duration_ns) / sum(sum(duration_ns)) OVER (PARTITION BY job, host, rank, pid) AS share,
           row_number() OVER (PARTITION BY job, host, rank, pid
                              ORDER BY sum(duration_ns) DESC NULLS LAST, name) AS n
    FROM kernels
    GROUP BY job, host, rank, pid, name
) t
WHERE n <= ${TOP}
ORDER BY rank NULLS LAST, host, pid, total_ns DESC NULLS LAST, name
