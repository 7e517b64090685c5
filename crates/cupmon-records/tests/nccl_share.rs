//! The collectives' share of GPU time on a dump made for it: NCCL kernels overlapping
//! compute kernels by known amounts, on two devices, written out of time order across
//! two chunks, with an unfinished and a pre-collection kernel that have no time.

use cupmon_records::dump::META_FILE;
use cupmon_records::nccl::{CollectiveStats, CollectiveTime, DeviceCollectiveTime};
use cupmon_records::{
    dump_stats, ActivityKind, BufferCompletion, DumpWriter, KernelRecord, Layout, MetaFile, Record,
    RecordWriter,
};

use super::common::fixture_dir;

pub const ALL_REDUCE: &str =
    "_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL24ncclDevKernelArgsStorageILm4096EE";
pub const ALL_GATHER: &str =
    "_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE";
pub const GEMM: &str = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_nn";

fn kernel(device: u32, stream: u32, name_ptr: u64, start: u64, end: u64) -> Record {
    Record::Kernel(KernelRecord {
        kind: ActivityKind::CONCURRENT_KERNEL,
        device_id: device,
        stream_id: stream,
        name_ptr,
        start,
        end,
        ..KernelRecord::default()
    })
}

/// Device 0: GEMM [1000, 5000) and [8000, 10000) on stream 7, AllReduce [3000, 9000)
/// and AllGather [12000, 13000) on stream 20; device 1: AllReduce [2000, 2500). All
/// times are offsets from T0.
fn write_dump(dir: &std::path::Path) {
    const T0: u64 = 1_795_979_258_000_000_000;
    let mut meta = MetaFile::read(fixture_dir("cuda_workload").join(META_FILE)).unwrap();
    meta.set("rank", "3");
    let mut w = DumpWriter::create(dir, &meta).unwrap();
    w.add_kernel_name(1, GEMM).unwrap();
    w.add_kernel_name(2, ALL_REDUCE).unwrap();
    w.add_kernel_name(3, ALL_GATHER).unwrap();
    // The same AllReduce kernel under a second name pointer (another module).
    w.add_kernel_name(4, ALL_REDUCE).unwrap();
    let chunks = [
        vec![
            kernel(0, 7, 1, 1000, 5000),
            kernel(0, 7, 1, 8000, 10000),
            kernel(0, 20, 3, 12000, 13000),
            // Launched before collection, and still running at a forced flush.
            kernel(0, 7, 1, 0, 0),
        ],
        vec![
            kernel(0, 20, 2, 3000, 9000),
            kernel(1, 20, 4, 2000, 2500),
            kernel(0, 20, 2, 14000, 0),
        ],
    ];
    for (i, records) in chunks.iter().enumerate() {
        let mut buf = RecordWriter::new(Layout::cupti_13_0());
        for r in records {
            let r = match r {
                Record::Kernel(k) if k.start != 0 || k.end != 0 => Record::Kernel(KernelRecord {
                    start: k.start + T0,
                    end: if k.end == 0 { 0 } else { k.end + T0 },
                    ..k.clone()
                }),
                other => other.clone(),
            };
            buf.push(&r);
        }
        let done = T0 + 20_000 + i as u64;
        let completion = BufferCompletion {
            stream_id: 0,
            context: 1,
            cupti_completed_ns: done,
            unix_completed_ns: done,
        };
        w.write_chunk(completion, buf.as_bytes()).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn nccl_time_is_a_union_against_the_union_of_all_kernels_per_device() {
    let tmp = tempfile::tempdir().unwrap();
    write_dump(tmp.path());
    let s = dump_stats(tmp.path(), 10, |_| {}).unwrap();
    let want = CollectiveStats {
        devices: vec![
            DeviceCollectiveTime {
                device: 0,
                kernels: 4,
                nccl_kernels: 2,
                // [1000, 10000) and [12000, 13000).
                busy_ns: 10_000,
                // [3000, 9000) and [12000, 13000).
                nccl_ns: 7_000,
                // [5000, 8000) and [12000, 13000): no GEMM running.
                nccl_alone_ns: 4_000,
                uncertain_ns: 0,
            },
            DeviceCollectiveTime {
                device: 1,
                kernels: 1,
                nccl_kernels: 1,
                busy_ns: 500,
                nccl_ns: 500,
                nccl_alone_ns: 500,
                uncertain_ns: 0,
            },
        ],
        collectives: vec![
            CollectiveTime {
                label: "AllReduce bf16".into(),
                launches: 2,
                total_ns: 6_500,
            },
            CollectiveTime {
                label: "AllGather".into(),
                launches: 1,
                total_ns: 1_000,
            },
        ],
    };
    assert_eq!(s.collectives, want);
    assert_eq!(s.collectives.devices[0].nccl_share(), Some(0.7));
    assert_eq!(s.collectives.devices[0].nccl_alone_share(), Some(0.4));
    assert_eq!(s.collectives.nccl_kernels(), 3);
    // The top list follows `top`.
    let s = dump_stats(tmp.path(), 1, |_| {}).unwrap();
    assert_eq!(s.collectives.collectives, want.collectives[..1]);
}

#[test]
fn a_dump_without_nccl_kernels_has_devices_but_no_collectives() {
    let s = dump_stats(fixture_dir("cuda_workload"), 10, |_| {}).unwrap();
    assert_eq!(s.collectives.nccl_kernels(), 0);
    assert!(s.collectives.collectives.is_empty());
    let d = &s.collectives.devices[0];
    assert_eq!(
        (d.nccl_ns, d.nccl_alone_ns, d.nccl_share()),
        (0, 0, Some(0.0))
    );
    // 16 kernel records, all timed; busy time no more than their summed durations.
    assert_eq!(d.kernels, 16);
    assert!(d.busy_ns > 0);
}
