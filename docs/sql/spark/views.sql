-- Spark SQL (3.3+): temporary views over a `cupmon export-parquet` directory.
-- Replace ${OUT} with the directory's URI (a local path, s3a://bucket/fleet, ...);
-- Spark finds the day=/hour= partitions itself. tests/python/test_spark.py runs these
-- files in PySpark's local mode and checks their answers against DuckDB's.
CREATE OR REPLACE TEMPORARY VIEW kernels USING parquet OPTIONS (path '${OUT}/kernels');
CREATE OR REPLACE TEMPORARY VIEW memcpy USING parquet OPTIONS (path '${OUT}/memcpy');
CREATE OR REPLACE TEMPORARY VIEW memset USING parquet OPTIONS (path '${OUT}/memset');
CREATE OR REPLACE TEMPORARY VIEW api USING parquet OPTIONS (path '${OUT}/api');
CREATE OR REPLACE TEMPORARY VIEW dump_exports USING parquet OPTIONS (path '${OUT}/dumps');
