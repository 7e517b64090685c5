-- Trino (Hive connector) tables over a `cupmon export-parquet` directory.
-- Generated from cupmon-parquet's schema (docs.rs); a test keeps it in step.
-- Replace LOCATION with the directory's URI (s3://bucket/fleet, hdfs://..., file:///...).
-- After each export adds partitions:
--   CALL hive.system.sync_partition_metadata('cupmon', 'kernels', 'ADD');

CREATE SCHEMA IF NOT EXISTS hive.cupmon;

CREATE TABLE IF NOT EXISTS hive.cupmon.kernels (
    job VARCHAR,
    host VARCHAR,
    rank INTEGER,
    local_rank INTEGER,
    pid BIGINT,
    start_ns BIGINT,
    duration_ns BIGINT,
    name VARCHAR,
    device BIGINT,
    context BIGINT,
    stream BIGINT,
    correlation_id BIGINT,
    external_id BIGINT,
    user_annotation VARCHAR,
    grid_x INTEGER,
    grid_y INTEGER,
    grid_z INTEGER,
    block_x INTEGER,
    block_y INTEGER,
    block_z INTEGER,
    registers_per_thread INTEGER,
    static_shared_memory INTEGER,
    dynamic_shared_memory INTEGER,
    graph_id BIGINT,
    graph_node_id BIGINT,
    queued_ns BIGINT,
    grid_id BIGINT,
    collective VARCHAR,
    stack_id BIGINT,
    source_line VARCHAR,
    day DATE,
    hour INTEGER
) WITH (
    external_location = 'LOCATION/kernels',
    format = 'PARQUET',
    partitioned_by = ARRAY['day', 'hour']
);
CALL hive.system.sync_partition_metadata('cupmon', 'kernels', 'ADD');

CREATE TABLE IF NOT EXISTS hive.cupmon.memcpy (
    job VARCHAR,
    host VARCHAR,
    rank INTEGER,
    local_rank INTEGER,
    pid BIGINT,
    start_ns BIGINT,
    duration_ns BIGINT,
    bytes BIGINT,
    copy_kind VARCHAR,
    src_kind VARCHAR,
    dst_kind VARCHAR,
    flags INTEGER,
    device BIGINT,
    context BIGINT,
    stream BIGINT,
    correlation_id BIGINT,
    runtime_correlation_id BIGINT,
    external_id BIGINT,
    user_annotation VARCHAR,
    graph_id BIGINT,
    graph_node_id BIGINT,
    stack_id BIGINT,
    source_line VARCHAR,
    day DATE,
    hour INTEGER
) WITH (
    external_location = 'LOCATION/memcpy',
    format = 'PARQUET',
    partitioned_by = ARRAY['day', 'hour']
);
CALL hive.system.sync_partition_metadata('cupmon', 'memcpy', 'ADD');

CREATE TABLE IF NOT EXISTS hive.cupmon.memset (
    job VARCHAR,
    host VARCHAR,
    rank INTEGER,
    local_rank INTEGER,
    pid BIGINT,
    start_ns BIGINT,
    duration_ns BIGINT,
    bytes BIGINT,
    value BIGINT,
    memory_kind VARCHAR,
    flags INTEGER,
    device BIGINT,
    context BIGINT,
    stream BIGINT,
    correlation_id BIGINT,
    external_id BIGINT,
    user_annotation VARCHAR,
    graph_id BIGINT,
    graph_node_id BIGINT,
    stack_id BIGINT,
    source_line VARCHAR,
    day DATE,
    hour INTEGER
) WITH (
    external_location = 'LOCATION/memset',
    format = 'PARQUET',
    partitioned_by = ARRAY['day', 'hour']
);
CALL hive.system.sync_partition_metadata('cupmon', 'memset', 'ADD');

CREATE TABLE IF NOT EXISTS hive.cupmon.api (
    job VARCHAR,
    host VARCHAR,
    rank INTEGER,
    local_rank INTEGER,
    pid BIGINT,
    start_ns BIGINT,
    duration_ns BIGINT,
    domain VARCHAR,
    name VARCHAR,
    cbid BIGINT,
    thread_id BIGINT,
    correlation_id BIGINT,
    return_value BIGINT,
    external_id BIGINT,
    user_annotation VARCHAR,
    day DATE,
    hour INTEGER
) WITH (
    external_location = 'LOCATION/api',
    format = 'PARQUET',
    partitioned_by = ARRAY['day', 'hour']
);
CALL hive.system.sync_partition_metadata('cupmon', 'api', 'ADD');

CREATE TABLE IF NOT EXISTS hive.cupmon.off_clock (
    job VARCHAR,
    host VARCHAR,
    rank INTEGER,
    local_rank INTEGER,
    pid BIGINT,
    buffer_completed_ns BIGINT,
    clock VARCHAR,
    kind VARCHAR,
    name VARCHAR,
    raw_start BIGINT,
    raw_end BIGINT,
    device BIGINT,
    stream BIGINT,
    correlation_id BIGINT,
    day DATE,
    hour INTEGER
) WITH (
    external_location = 'LOCATION/off_clock',
    format = 'PARQUET',
    partitioned_by = ARRAY['day', 'hour']
);
CALL hive.system.sync_partition_metadata('cupmon', 'off_clock', 'ADD');

CREATE TABLE IF NOT EXISTS hive.cupmon.stacks (
    job VARCHAR,
    host VARCHAR,
    rank INTEGER,
    local_rank INTEGER,
    pid BIGINT,
    time_ns BIGINT,
    stack_id BIGINT,
    frame BIGINT,
    file VARCHAR,
    function VARCHAR,
    line BIGINT,
    origin VARCHAR,
    user_frame BOOLEAN,
    truncated BOOLEAN,
    day DATE,
    hour INTEGER
) WITH (
    external_location = 'LOCATION/stacks',
    format = 'PARQUET',
    partitioned_by = ARRAY['day', 'hour']
);
CALL hive.system.sync_partition_metadata('cupmon', 'stacks', 'ADD');

CREATE TABLE IF NOT EXISTS hive.cupmon.dumps (
    job VARCHAR,
    host VARCHAR,
    rank INTEGER,
    local_rank INTEGER,
    pid BIGINT,
    time_ns BIGINT,
    first_ns BIGINT,
    last_ns BIGINT,
    dump VARCHAR,
    export_seq VARCHAR,
    first_chunk BIGINT,
    end_chunk BIGINT,
    from_ns BIGINT,
    to_ns BIGINT,
    kernels BIGINT,
    memcpy BIGINT,
    memset BIGINT,
    api BIGINT,
    records BIGINT,
    dropped_records BIGINT,
    dropped_records_note VARCHAR,
    session_open BOOLEAN,
    cupti_version BIGINT,
    cupti_library VARCHAR,
    recorder_version VARCHAR,
    exporter_version VARCHAR,
    buffer_size BIGINT,
    session_start_unix_ns BIGINT,
    session_start_cupti_ns BIGINT,
    session_start_monotonic_ns BIGINT,
    timestamp_mode VARCHAR,
    clock_converted BIGINT,
    off_clock BIGINT,
    unresolved_kernel_names BIGINT,
    world_size BIGINT,
    local_world_size BIGINT,
    backend VARCHAR,
    command VARCHAR,
    warnings BIGINT,
    warning_text VARCHAR,
    device_properties VARCHAR,
    meta_json VARCHAR,
    day DATE,
    hour INTEGER
) WITH (
    external_location = 'LOCATION/dumps',
    format = 'PARQUET',
    partitioned_by = ARRAY['day', 'hour']
);
CALL hive.system.sync_partition_metadata('cupmon', 'dumps', 'ADD');

