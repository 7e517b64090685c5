//! MEMORY2 and MEMORY_POOL through the monitor: the kinds enabled by its
//! config, the fake's allocations, frees and pool operations in the dump
//! (decoded records and window events) and in a trace window.

use std::collections::HashMap;
use std::path::Path;

use cupmon_cupti::ActivityKind;
use cupmon_monitor::Monitor;
use cupmon_records::{walk_records, Dump, MemoryPoolRecord, MemoryRecord, Record};
use cupmon_test_support::{default_pool_address, exclusive, mem_pool};
use cupmon_trace::{decode_dump_to_window, MemoryEvent, MemoryPoolEvent, WindowEvent};

use crate::common::{config, fake};

const MIB: u64 = 1 << 20;
/// Device 0's synchronous allocation, device 1's stream-ordered one, a pool.
const SYNC: u64 = 0x7f00_0000_0000;
const ASYNC: u64 = 0x7f10_0000_0000;
const POOL: u64 = 0x7e80_0000_0000;

fn with_memory_kinds(dir: &Path) -> cupmon_monitor::MonitorConfig {
    let mut c = config(dir);
    c.kinds
        .extend([ActivityKind::MEMORY2, ActivityKind::MEMORY_POOL]);
    c
}

/// The dump's MEMORY2 and MEMORY_POOL records, in buffer order.
fn memory_records(dump: &Path) -> (Vec<MemoryRecord>, Vec<MemoryPoolRecord>) {
    let dump = Dump::open(dump).expect("open the dump");
    let (mut memory, mut pools) = (Vec::new(), Vec::new());
    let report = walk_records(
        &dump,
        |_| {},
        |_, _, record| match record {
            Record::Memory(r) => memory.push(r.clone()),
            Record::MemoryPool(r) => pools.push(r.clone()),
            _ => {}
        },
    )
    .expect("walk the dump");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    (memory, pools)
}

fn memory_events(events: &[WindowEvent]) -> Vec<&MemoryEvent> {
    let memory = events.iter().filter_map(|e| match e {
        WindowEvent::Memory(m) => Some(m),
        _ => None,
    });
    memory.collect()
}

fn pool_events(events: &[WindowEvent]) -> Vec<&MemoryPoolEvent> {
    let pools = events.iter().filter_map(|e| match e {
        WindowEvent::MemoryPool(p) => Some(p),
        _ => None,
    });
    pools.collect()
}

#[test]
fn memory_kinds_in_the_config_dump_every_allocation_free_and_pool_operation() {
    let _guard = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let monitor = Monitor::start_with(cupti, with_memory_kinds(dir.path())).expect("start");
    fake.malloc(0, MIB, SYNC, false, 7).expect("cudaMalloc");
    fake.malloc(1, 4096, ASYNC, true, 13)
        .expect("cudaMallocAsync");
    fake.mem_pool_create(0, POOL, 32 * MIB)
        .expect("cudaMemPoolCreate");
    fake.mem_pool_trim(0, POOL, 8 * MIB, 8 * MIB)
        .expect("cudaMemPoolTrimTo");
    fake.free(1, ASYNC, true, 13).expect("cudaFreeAsync");
    fake.mem_pool_destroy(0, POOL, 0)
        .expect("cudaMemPoolDestroy");
    fake.free(0, SYNC, false, 7).expect("cudaFree");
    let twice = fake.free(0, SYNC, false, 7).expect_err("freed already");
    assert!(
        twice
            .to_string()
            .starts_with("cupmonFakeFree(0x7f0000000000): CUPTI_ERROR_INVALID_PARAMETER"),
        "{twice}"
    );
    assert_eq!(fake.stats().live_allocations, 0);
    let (stats, _) = monitor.stop().expect("stop");
    assert_eq!(stats.dropped_records, 0);
    assert_eq!(stats.records_by_kind.get("MEMORY2"), Some(&4), "{stats:?}");
    assert_eq!(
        stats.records_by_kind.get("MEMORY_POOL"),
        Some(&3),
        "{stats:?}"
    );

    let dump = dir.path().join("dump");
    let (memory, pools) = memory_records(&dump);
    let seen: Vec<(u32, u32, u64, u64, u32, u32)> = memory
        .iter()
        .map(|m| {
            (
                m.operation,
                m.device_id,
                m.address,
                m.bytes,
                m.is_async,
                m.stream_id,
            )
        })
        .collect();
    let (alloc, release) = (MemoryRecord::ALLOCATION, MemoryRecord::RELEASE);
    assert_eq!(
        seen,
        [
            (alloc, 0, SYNC, MIB, 0, 7),
            (alloc, 1, ASYNC, 4096, 1, 13),
            (release, 1, ASYNC, 4096, 1, 13),
            (release, 0, SYNC, MIB, 0, 7),
        ],
        "a free carries the size of its allocation"
    );
    assert!(memory.iter().all(|m| m.memory_kind == 3), "device memory");
    assert!(memory.iter().all(|m| m.process_id == std::process::id()));
    // Stream-ordered memory comes from the device's default pool, whose use
    // the records show after each operation; the synchronous one from none.
    let pool_of = |m: &MemoryRecord| (m.pool_type, m.pool_address, m.pool_utilized_size);
    let default_pool = default_pool_address(1);
    assert_eq!(
        memory.iter().map(pool_of).collect::<Vec<_>>(),
        [
            (0, 0, 0),
            (1, default_pool, 4096),
            (1, default_pool, 0),
            (0, 0, 0)
        ]
    );
    let seen: Vec<(u32, u32, u64, u64, u64)> = pools
        .iter()
        .map(|p| {
            (
                p.operation,
                p.device_id,
                p.address,
                p.size,
                p.min_bytes_to_keep,
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (mem_pool::CREATED, 0, POOL, 32 * MIB, 0),
            (mem_pool::TRIMMED, 0, POOL, 8 * MIB, 8 * MIB),
            (mem_pool::DESTROYED, 0, POOL, 0, 0),
        ]
    );
    // Each record has the fake clock's time and its call's correlation id.
    let mut stamps: Vec<(u64, u32)> = memory
        .iter()
        .map(|m| (m.timestamp, m.correlation_id))
        .chain(pools.iter().map(|p| (p.timestamp, p.correlation_id)))
        .collect();
    stamps.sort_unstable();
    let correlations: Vec<u32> = stamps.iter().map(|&(_, c)| c).collect();
    assert!(
        correlations.windows(2).all(|w| w[0] < w[1]) && correlations[0] > 0,
        "one call each, in call order: {stamps:?}"
    );
    assert!(stamps.windows(2).all(|w| w[0].0 < w[1].0), "{stamps:?}");

    // The same records as window events of the whole dump.
    let (window, report) = decode_dump_to_window(&dump, |_| {}).expect("decode");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let events = memory_events(&window.events);
    assert_eq!(events.len(), 4);
    for (event, record) in events.iter().zip(&memory) {
        assert_eq!(**event, MemoryEvent::from(record));
    }
    assert_eq!(
        events.iter().map(|e| e.is_allocation()).collect::<Vec<_>>(),
        [true, true, false, false]
    );
    let names: Vec<&str> = pool_events(&window.events)
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "[memory pool] created",
            "[memory pool] trimmed",
            "[memory pool] destroyed"
        ]
    );
}

#[test]
fn a_window_holds_the_memory_operations_after_its_start_with_their_calls() {
    let _guard = exclusive();
    let (cupti, fake) = fake();
    let dir = tempfile::tempdir().expect("tempdir");
    let monitor = Monitor::start_with(cupti, with_memory_kinds(dir.path())).expect("start");
    fake.malloc(0, MIB, SYNC, false, 7)
        .expect("before the window");
    monitor.start_window().expect("start window");
    fake.malloc(1, 4096, ASYNC, true, 13)
        .expect("cudaMallocAsync");
    fake.mem_pool_create(0, POOL, 32 * MIB)
        .expect("cudaMemPoolCreate");
    fake.free(0, SYNC, false, 7).expect("cudaFree");
    let window = monitor.end_window().expect("end window");
    fake.free(1, ASYNC, true, 13).expect("after the window");

    let memory = memory_events(&window.events);
    let seen: Vec<(bool, u64, u64)> = memory
        .iter()
        .map(|m| (m.is_allocation(), m.address, m.bytes))
        .collect();
    assert_eq!(
        seen,
        [(true, ASYNC, 4096), (false, SYNC, MIB)],
        "the allocation before the window is not in it"
    );
    let pools = pool_events(&window.events);
    assert_eq!(pools.len(), 1);
    assert_eq!((pools[0].address, pools[0].size), (POOL, 32 * MIB));
    // Each operation's runtime call is in the window too, linked by correlation id.
    let calls: HashMap<u32, String> = window
        .events
        .iter()
        .filter_map(|e| match e {
            WindowEvent::Runtime(api) => Some((
                api.correlation_id,
                api.api_name.as_deref().unwrap_or("?").to_owned(),
            )),
            _ => None,
        })
        .collect();
    let call_of = |correlation_id: u32| calls.get(&correlation_id).map(String::as_str);
    assert_eq!(call_of(memory[0].correlation_id), Some("cudaMallocAsync"));
    assert_eq!(call_of(memory[1].correlation_id), Some("cudaFree"));
    assert_eq!(call_of(pools[0].correlation_id), Some("cudaMemPoolCreate"));

    let (stats, _) = monitor.stop().expect("stop");
    assert_eq!(
        stats.records_by_kind.get("MEMORY2"),
        Some(&4),
        "the dump has them all, window or not: {stats:?}"
    );
    let (dumped, _) = memory_records(&dir.path().join("dump"));
    assert_eq!(dumped.len(), 4);
}
