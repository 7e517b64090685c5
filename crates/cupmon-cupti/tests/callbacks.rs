//! Buffer callbacks end to end against the fake libcupti: lend, fill, complete,
//! decode, resolve names; drops, foreign buffers and panics at the boundary.

use std::collections::BTreeMap;

use cupmon_cupti::{callback_stats, ActivityKind, Cupti, FlushFlag};
use cupmon_records::{ApiRecord, KernelRecord, Record};
use cupmon_test_support::cbid;

use crate::common::{decode, session, wait_until};

#[test]
fn launched_kernels_come_back_decoded_with_names() {
    let s = session();
    s.cupti.enable(ActivityKind::CONCURRENT_KERNEL).unwrap();
    s.cupti.enable(ActivityKind::RUNTIME).unwrap();
    s.fake.launch_kernels(5, 7, "_Z7kernelAPf").unwrap();
    s.fake.launch_kernels(3, 8, "kernelB").unwrap();
    s.cupti.flush_all(FlushFlag::NONE).unwrap();

    let collected = s.sink.take();
    let names: BTreeMap<u64, String> = collected.iter().flat_map(|c| c.new_names.clone()).collect();
    assert_eq!(names.len(), 2, "one pointer per distinct name: {names:?}");
    let records = decode(&collected);
    let kernels: Vec<_> = records.iter().filter_map(as_kernel).collect();
    let launches: Vec<_> = records.iter().filter_map(as_api).collect();
    assert_eq!(kernels.len(), 8);
    assert_eq!(launches.len(), 8);
    assert!(launches
        .iter()
        .all(|a| a.cbid == cbid::RUNTIME_LAUNCH_KERNEL));
    for (kernel, launch) in kernels.iter().zip(&launches) {
        assert!(kernel.is_concurrent());
        assert_eq!(kernel.correlation_id, launch.correlation_id);
        assert!(kernel.end > kernel.start);
    }
    let by_stream: Vec<(u32, &str)> = kernels
        .iter()
        .map(|k| (k.stream_id, names[&k.name_ptr].as_str()))
        .collect();
    assert_eq!(by_stream[0], (7, "_Z7kernelAPf"));
    assert_eq!(by_stream[7], (8, "kernelB"));
    assert!(
        std::ptr::eq(Cupti::load().unwrap(), s.cupti),
        "load_fake made the fake the process's libcupti"
    );
    assert_eq!(
        callback_stats().outstanding_buffers,
        0,
        "the flush returned every buffer"
    );
}

#[test]
fn full_buffers_arrive_from_cuptis_thread_and_names_are_read_once() {
    let s = session();
    s.sink.set_buffer_size(4096);
    s.cupti.enable(ActivityKind::CONCURRENT_KERNEL).unwrap();
    s.fake.launch_kernels(100, 1, "k_fill").unwrap();
    // 4 KiB holds 18 kernel records of 216 bytes: five buffers are full.
    wait_until("the delivery thread", || s.sink.buffers_so_far() >= 5);
    s.cupti.flush_all(FlushFlag::NONE).unwrap();

    let collected = s.sink.take();
    assert_eq!(collected.len(), 6);
    let names: Vec<_> = collected.iter().flat_map(|c| c.new_names.clone()).collect();
    assert_eq!(names.len(), 1, "the sink's dedupe sees the pointer once");
    assert_eq!(names[0].1, "k_fill");
    assert_eq!(decode(&collected).len(), 100);
    assert_eq!(s.fake.stats().buffers_delivered, 6);
}

#[test]
fn refused_requests_drop_records_and_the_next_buffer_counts_them() {
    let s = session();
    s.cupti.enable(ActivityKind::CONCURRENT_KERNEL).unwrap();
    s.cupti.enable(ActivityKind::RUNTIME).unwrap();
    let refused_before = callback_stats().requests_refused;
    s.sink.set(&s.sink.refuse, true);
    s.fake.launch_kernels(10, 1, "dropped").unwrap();
    assert_eq!(s.fake.stats().records_dropped, 20);
    assert!(callback_stats().requests_refused > refused_before);

    s.sink.set(&s.sink.refuse, false);
    s.fake.launch_kernels(1, 1, "kept").unwrap();
    s.cupti.flush_all(FlushFlag::NONE).unwrap();
    let collected = s.sink.take();
    assert_eq!(collected.len(), 1);
    assert_eq!(
        collected[0].dropped, 20,
        "cuptiActivityGetNumDroppedRecords at completion"
    );
    assert_eq!(decode(&collected).len(), 2);
    assert_eq!(
        s.cupti.dropped_records(0).unwrap(),
        0,
        "the count resets when read"
    );
}

#[test]
fn a_buffer_cupmon_did_not_lend_is_left_alone() {
    let s = session();
    let foreign_before = callback_stats().foreign_buffers;
    // The fake frees this buffer itself after the callback: if cupmon freed or
    // kept it, the allocator would abort on the double free.
    s.fake.deliver_foreign_buffer().unwrap();
    assert_eq!(callback_stats().foreign_buffers, foreign_before + 1);
    assert!(s.sink.take().is_empty(), "not delivered to the sink");
}

#[test]
fn a_panicking_sink_does_not_unwind_into_cupti() {
    let s = session();
    s.cupti.enable(ActivityKind::CONCURRENT_KERNEL).unwrap();
    let panics_before = callback_stats().panics;
    s.sink.set(&s.sink.panic_on_complete, true);
    s.fake.launch_kernels(2, 1, "boom").unwrap();
    s.cupti.flush_all(FlushFlag::NONE).unwrap();
    assert_eq!(callback_stats().panics, panics_before + 1);
    assert_eq!(
        callback_stats().outstanding_buffers,
        0,
        "the panicked buffer was freed, not leaked"
    );

    s.sink.set(&s.sink.panic_on_complete, false);
    s.sink.set(&s.sink.panic_on_request, true);
    s.fake.launch_kernels(1, 1, "no_buffer").unwrap();
    assert_eq!(callback_stats().panics, panics_before + 2);
    assert_eq!(
        s.fake.stats().records_dropped,
        1,
        "a panicking request is a refusal"
    );

    s.sink.set(&s.sink.panic_on_request, false);
    s.fake.launch_kernels(1, 1, "after").unwrap();
    s.cupti.flush_all(FlushFlag::NONE).unwrap();
    assert_eq!(decode(&s.sink.take()).len(), 1, "collection goes on");
}

#[test]
fn external_correlation_records_precede_the_api_record() {
    let s = session();
    for kind in [
        ActivityKind::RUNTIME,
        ActivityKind::EXTERNAL_CORRELATION,
        ActivityKind::CONCURRENT_KERNEL,
    ] {
        s.cupti.enable(kind).unwrap();
    }
    use cupmon_cupti::ExternalCorrelationKind as Ext;
    s.cupti
        .push_external_correlation_id(Ext::CUSTOM0, 7)
        .unwrap();
    s.cupti
        .push_external_correlation_id(Ext::CUSTOM1, 42)
        .unwrap();
    s.fake.launch_kernels(1, 3, "annotated").unwrap();
    assert_eq!(
        s.cupti.pop_external_correlation_id(Ext::CUSTOM1).unwrap(),
        42
    );
    assert_eq!(
        s.cupti.pop_external_correlation_id(Ext::CUSTOM0).unwrap(),
        7
    );
    s.fake.launch_kernels(1, 3, "plain").unwrap();
    s.cupti.flush_all(FlushFlag::NONE).unwrap();

    let records = decode(&s.sink.take());
    let kinds: Vec<_> = records.iter().map(|r| r.kind().cupti_name()).collect();
    assert_eq!(
        kinds,
        [
            "EXTERNAL_CORRELATION",
            "EXTERNAL_CORRELATION",
            "RUNTIME",
            "CONCURRENT_KERNEL",
            "RUNTIME",
            "CONCURRENT_KERNEL"
        ]
    );
    let Record::ExternalCorrelation(custom1) = &records[1] else {
        unreachable!()
    };
    assert_eq!(
        (custom1.external_kind, custom1.external_id),
        (Ext::CUSTOM1.0, 42)
    );
    assert_eq!(custom1.correlation_id, records[2].correlation_id());
}

#[test]
fn per_call_api_filters_follow_cupti_rules() {
    let s = session();
    s.cupti.enable(ActivityKind::RUNTIME).unwrap();
    s.cupti
        .enable_runtime_api(cbid::RUNTIME_LAUNCH_KERNEL, false)
        .unwrap();
    // DRIVER stays off; one driver call is switched on by itself.
    s.cupti
        .enable_driver_api(cbid::DRIVER_LAUNCH_KERNEL, true)
        .unwrap();
    s.fake.launch_kernels(1, 1, "unseen_launch").unwrap();
    s.fake.runtime_call(17).unwrap();
    s.fake.driver_call(cbid::DRIVER_LAUNCH_KERNEL).unwrap();
    s.fake.driver_call(1).unwrap();
    s.cupti.flush_all(FlushFlag::NONE).unwrap();
    let calls: Vec<(String, u32)> = decode(&s.sink.take())
        .iter()
        .map(|r| match r {
            Record::Api(a) => (r.kind().cupti_name().into_owned(), a.cbid),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("RUNTIME".to_string(), 17),
            ("DRIVER".to_string(), cbid::DRIVER_LAUNCH_KERNEL)
        ]
    );
}

#[test]
fn unfinished_kernels_wait_for_a_forced_flush() {
    let s = session();
    s.cupti.enable(ActivityKind::CONCURRENT_KERNEL).unwrap();
    s.fake.set_kernels_pending(true);
    s.fake.launch_kernels(2, 1, "running").unwrap();
    s.cupti.flush_all(FlushFlag::NONE).unwrap();
    assert!(
        s.sink.take().is_empty(),
        "a plain flush holds back unfinished records"
    );
    s.cupti.flush_all(FlushFlag::FORCED).unwrap();
    let records = decode(&s.sink.take());
    assert_eq!(records.len(), 2);
    assert!(records
        .iter()
        .all(|r| matches!(r, Record::Kernel(k) if k.end == 0 && k.start > 0)));

    s.fake.launch_kernels(1, 1, "finishes").unwrap();
    s.fake.finish_kernels().unwrap();
    s.cupti.flush_all(FlushFlag::NONE).unwrap();
    assert!(matches!(&decode(&s.sink.take())[..], [Record::Kernel(k)] if k.end > k.start));
}

#[test]
fn memcpy_and_memset_records() {
    let s = session();
    s.cupti.enable(ActivityKind::MEMCPY).unwrap();
    s.cupti.enable(ActivityKind::MEMSET).unwrap();
    s.fake.memcpy(2, 4096, 1, 5).unwrap();
    s.fake.memset(1, 512, 0xab, 6).unwrap();
    s.cupti.flush_all(FlushFlag::NONE).unwrap();
    let records = decode(&s.sink.take());
    assert!(
        matches!(&records[..], [Record::Memcpy(a), Record::Memcpy(_), Record::Memset(m)]
        if a.bytes == 4096 && a.copy_kind == 1 && a.stream_id == 5 && m.value == 0xab && m.stream_id == 6)
    );
}

#[test]
fn a_slow_completion_thread_leaves_buffers_with_cupti() {
    let s = session();
    s.sink.set_buffer_size(4096);
    s.cupti.enable(ActivityKind::CONCURRENT_KERNEL).unwrap();
    s.fake
        .set_completion_delay(std::time::Duration::from_millis(100));
    s.fake.launch_kernels(60, 1, "k_slow").unwrap(); // 3 full buffers, 1 open
    let stats = callback_stats();
    assert_eq!(stats.outstanding_buffers, 4, "{stats:?}");
    assert_eq!(stats.outstanding_bytes, 4 * 4096);
    assert!(s.fake.stats().buffers_waiting >= 2);
    wait_until("the slow deliveries", || s.sink.buffers_so_far() == 3);
    s.cupti.flush_all(FlushFlag::NONE).unwrap();
    assert_eq!(decode(&s.sink.take()).len(), 60);
    assert_eq!(callback_stats().outstanding_buffers, 0);
}

fn as_kernel(record: &Record) -> Option<&KernelRecord> {
    match record {
        Record::Kernel(kernel) => Some(kernel),
        _ => None,
    }
}

fn as_api(record: &Record) -> Option<&ApiRecord> {
    match record {
        Record::Api(api) => Some(api),
        _ => None,
    }
}
