//! Encoder and decoder agree: synthetic records of every kind, written with RecordWriter
//! in every CUPTI version's layout, read back equal (fields the version lacks read as 0);
//! a proptest does the same for arbitrary field values and checks that the decoder
//! never panics on arbitrary bytes.

mod common;

use cupmon_records::layout::TABLES;
use cupmon_records::{
    decode_record, encode_record, encoded_size, ActivityKind, ApiDomain, ApiRecord,
    CudaEventRecord, DecodeError, ExternalCorrelationRecord, KernelRecord, Layout, MemcpyRecord,
    MemsetRecord, OverheadRecord, Record, RecordIter, RecordWriter, SyncRecord,
};
use proptest::prelude::*;

fn layouts() -> impl Iterator<Item = Layout> {
    TABLES
        .iter()
        .map(|t| Layout::for_api_version(t.api_versions.0).unwrap())
}

/// One record of every kind, every field set to a distinct non-zero value.
fn samples() -> Vec<Record> {
    let kernel = KernelRecord {
        concurrent: true,
        cache_config: 0x21,
        shared_memory_config: 2,
        registers_per_thread: 40,
        partitioned_global_cache_requested: 1,
        partitioned_global_cache_executed: 2,
        start: 1_000,
        end: 2_000,
        completed: 2_001,
        device_id: 3,
        context_id: 4,
        stream_id: 5,
        grid: [6, 7, 8],
        block: [9, 10, 11],
        static_shared_memory: 12,
        dynamic_shared_memory: -13,
        local_memory_per_thread: 14,
        local_memory_total: 15,
        correlation_id: 16,
        grid_id: -17,
        name_ptr: 0x7f00_dead_beef,
        queued: 18,
        submitted: 19,
        launch_type: 20,
        is_shared_memory_carveout_requested: 1,
        shared_memory_carveout_requested: 22,
        shared_memory_executed: 23,
        graph_node_id: 24,
        shmem_limit_config: 25,
        graph_id: 26,
        channel_id: 27,
        channel_type: 28,
        cluster: [29, 30, 31],
        cluster_scheduling_policy: 32,
        local_memory_total_v2: 33,
        max_potential_cluster_size: 34,
        max_active_clusters: 35,
        is_device_launched: 1,
        priority: -36,
        execution_model: 37,
        source_graph_id: 38,
        source_graph_node_id: 39,
    };
    vec![
        Record::Kernel(kernel.clone()),
        Record::Kernel(KernelRecord {
            concurrent: false,
            ..kernel
        }),
        Record::Memcpy(MemcpyRecord {
            copy_kind: 1,
            src_kind: 2,
            dst_kind: 3,
            flags: 4,
            bytes: 5,
            start: 6,
            end: 7,
            device_id: 8,
            context_id: 9,
            stream_id: 10,
            correlation_id: 11,
            runtime_correlation_id: 12,
            graph_node_id: 13,
            graph_id: 14,
            channel_id: 15,
            channel_type: 16,
            is_device_launched: 1,
            copy_count: 18,
            source_graph_id: 19,
            source_graph_node_id: 20,
        }),
        Record::Memset(MemsetRecord {
            value: 1,
            bytes: 2,
            start: 3,
            end: 4,
            device_id: 5,
            context_id: 6,
            stream_id: 7,
            correlation_id: 8,
            flags: 9,
            memory_kind: 10,
            graph_node_id: 11,
            graph_id: 12,
            channel_id: 13,
            channel_type: 14,
            is_device_launched: 1,
            source_graph_id: 16,
            source_graph_node_id: 17,
        }),
        Record::Api(ApiRecord {
            domain: ApiDomain::Runtime,
            cbid: 211,
            start: 1,
            end: 2,
            process_id: 3,
            thread_id: 4,
            correlation_id: 5,
            return_value: 6,
        }),
        Record::Api(ApiRecord {
            domain: ApiDomain::Driver,
            cbid: 307,
            start: 1,
            end: 2,
            process_id: 3,
            thread_id: u32::MAX,
            correlation_id: 5,
            return_value: 6,
        }),
        Record::ExternalCorrelation(ExternalCorrelationRecord {
            external_kind: 5,
            external_id: u64::MAX,
            correlation_id: 7,
        }),
        Record::Overhead(OverheadRecord {
            overhead_kind: 0x7_0000,
            object_kind: 2,
            object_id: [1, 2, 3],
            start: 4,
            end: 5,
            correlation_id: 6,
            overhead_data: 7,
        }),
        Record::CudaEvent(CudaEventRecord {
            correlation_id: 1,
            context_id: 2,
            stream_id: 3,
            event_id: 4,
            device_id: 5,
            device_timestamp: 6,
            cuda_event_sync_id: 7,
            graph_node_id: 8,
            graph_id: 9,
            source_graph_id: 10,
            source_graph_node_id: 11,
        }),
        Record::Synchronization(SyncRecord {
            sync_type: 1,
            start: 2,
            end: 3,
            correlation_id: 4,
            context_id: 5,
            stream_id: 6,
            cuda_event_id: 7,
            cuda_event_sync_id: 8,
            return_value: 9,
        }),
    ]
}

#[test]
fn newest_layout_round_trips_every_field() {
    let layout = Layout::newest();
    let mut w = RecordWriter::new(layout);
    for r in samples() {
        w.push(&r);
    }
    let back: Vec<Record> = RecordIter::new(w.as_bytes(), layout)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(back, samples());
}

#[test]
fn every_layout_round_trips_the_fields_it_has() {
    for layout in layouts() {
        let mut w = RecordWriter::new(layout);
        let mut offsets = Vec::new();
        for r in samples() {
            offsets.push(w.push(&r));
        }
        let mut expected_offset = 0;
        let mut iter = RecordIter::new(w.as_bytes(), layout);
        for (want, off) in samples().iter().zip(offsets) {
            assert_eq!(off, expected_offset);
            let (at, got) = iter.next_with_offset().unwrap().unwrap();
            assert_eq!(at, off);
            expected_offset += encoded_size(want, layout);
            assert_eq!(got.kind(), want.kind());
            // Overhead records have a correlation id from 12.3 (Overhead2) on.
            if !(want.kind() == ActivityKind::Overhead && layout.table().overhead.size < 48) {
                assert_eq!(got.correlation_id(), want.correlation_id());
            }
            assert_eq!(got.span(), want.span());
            // Fields beyond the version's struct read as zero, and the rest survive.
            let n = encoded_size(&got, layout);
            let mut again = vec![0u8; n];
            encode_record(&got, layout, &mut again).unwrap();
            assert_eq!(
                decode_record(&again, layout).unwrap().0,
                got,
                "{}",
                layout.table().name
            );
        }
        assert!(iter.next().is_none());
        assert_eq!(w.len(), expected_offset);
    }
    // Concrete checks of what older versions lack.
    let old = Layout::for_api_version(18).unwrap();
    let mut w = RecordWriter::new(old);
    for r in samples() {
        w.push(&r);
    }
    let back: Vec<Record> = RecordIter::new(w.as_bytes(), old)
        .collect::<Result<_, _>>()
        .unwrap();
    let Record::Kernel(k) = &back[0] else {
        panic!()
    };
    assert_eq!(
        (k.max_active_clusters, k.is_device_launched, k.priority),
        (35, 0, 0)
    );
    let Record::Memcpy(m) = &back[2] else {
        panic!()
    };
    assert_eq!(
        (m.channel_type, m.is_device_launched, m.copy_count),
        (16, 0, 0)
    );
    let Record::Overhead(o) = &back[7] else {
        panic!()
    };
    assert_eq!((o.end, o.correlation_id), (5, 0));
    let Record::CudaEvent(e) = &back[8] else {
        panic!()
    };
    assert_eq!((e.event_id, e.device_id), (4, 0));
}

#[test]
fn encode_into_a_small_buffer_fails_without_writing() {
    let layout = Layout::cupti_13_0();
    let mut out = [0xAAu8; 100];
    let err = encode_record(&samples()[0], layout, &mut out).unwrap_err();
    assert_eq!(
        err.to_string(),
        "a CONCURRENT_KERNEL (10) record needs 216 bytes but only 100 are free in the buffer"
    );
    assert!(out.iter().all(|&b| b == 0xAA));
}

#[test]
fn decode_errors_name_kind_and_offset() {
    let layout = Layout::cupti_13_0();
    let mut w = RecordWriter::new(layout);
    w.push(&samples()[4]);
    let mut bytes = w.into_bytes();
    bytes.extend_from_slice(&77u32.to_le_bytes());
    bytes.extend_from_slice(&[0; 36]);
    let errors: Vec<DecodeError> = RecordIter::new(&bytes, layout)
        .filter_map(Result::err)
        .collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].to_string(),
        "record at offset 40: unknown activity kind 77 for CUPTI 13.0"
    );
    let mut w = RecordWriter::new(layout);
    w.push(&samples()[0]);
    let bytes = &w.as_bytes()[..200];
    let err = RecordIter::new(bytes, layout).next().unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        "record at offset 0: CONCURRENT_KERNEL (10) record of 216 bytes runs past the buffer end (200 bytes left)"
    );
    let err = RecordIter::new(&[5, 0], layout)
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "record at offset 0: 2 trailing bytes, too few to hold a record kind"
    );
    assert!(RecordIter::new(&[], layout).next().is_none());
}

/// A record of `kind` whose every field comes from `bytes` (decoding random bytes of the
/// newest layout sets every field the encoder knows).
fn record_from(kind: ActivityKind, bytes: &[u8]) -> Record {
    let layout = Layout::newest();
    let mut buf = bytes.to_vec();
    buf.resize(512, 0);
    buf[..4].copy_from_slice(&kind.as_u32().to_le_bytes());
    decode_record(&buf, layout).unwrap().0
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_records_round_trip(kind in prop::sample::select(ActivityKind::ALL.to_vec()),
                                    bytes in prop::collection::vec(any::<u8>(), 256),
                                    table in 0..TABLES.len()) {
        let record = record_from(kind, &bytes);
        // Newest layout: exact.
        let mut w = RecordWriter::new(Layout::newest());
        w.push(&record);
        prop_assert_eq!(&decode_record(w.as_bytes(), Layout::newest()).unwrap().0, &record);
        // Any layout: encode . decode is idempotent and keeps the common fields.
        let layout = Layout::for_api_version(TABLES[table].api_versions.0).unwrap();
        let mut w = RecordWriter::new(layout);
        w.push(&record);
        w.push(&record);
        let back: Vec<Record> = RecordIter::new(w.as_bytes(), layout).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(back.len(), 2);
        prop_assert_eq!(&back[0], &back[1]);
        prop_assert_eq!(back[0].kind(), record.kind());
        prop_assert_eq!(back[0].span(), record.span());
        let mut w2 = RecordWriter::new(layout);
        w2.push(&back[0]);
        prop_assert_eq!(w2.as_bytes(), &w.as_bytes()[..w2.len()]);
    }

    #[test]
    fn decoder_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048),
                            kinds in prop::collection::vec(prop::sample::select(vec![1u32, 2, 3, 4, 5, 10, 17, 36, 38, 39, 0, 77]), 0..16),
                            table in 0..TABLES.len()) {
        // Sprinkle valid kinds at 8-byte boundaries so that records decode for a while.
        let mut bytes = bytes;
        let mut at = 0;
        for k in kinds {
            if at + 4 > bytes.len() { break; }
            bytes[at..at + 4].copy_from_slice(&k.to_le_bytes());
            at += 40 + (k as usize % 3) * 8;
        }
        let layout = Layout::for_api_version(TABLES[table].api_versions.0).unwrap();
        let mut last = 0;
        for item in RecordIter::new(&bytes, layout).with_offsets() {
            match item {
                Ok((offset, _)) => { prop_assert!(offset >= last); last = offset; }
                Err(e) => prop_assert!(e.offset() <= bytes.len()),
            }
        }
    }
}
