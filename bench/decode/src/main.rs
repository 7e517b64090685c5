//! Decoding throughput on one core, on dumps of hundreds of MB built from the real H200
//! fixture buffers (chunks repeated, correlation ids renumbered per copy):
//!
//! - the torch_mlp record mix (mostly 40-byte runtime/driver records): records/s;
//! - kernel-only buffers (216-byte CUPTI 13.0 kernel records): MB/s.
//!
//! usage: cargo run --release -p cupmon-bench-decode -- [--size-mb 400] [--runs 3]
//!        [--fixtures tests/fixtures/h200-cupti13.0] [--keep DIR]
//!
//! Each measurement is the best of `--runs`: "memory" decodes chunk buffers already in
//! memory (the decoder alone), "file" streams the dump file through the chunk reader
//! (page cache, as `cupmon decode` reads), "window" builds the full trace window.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use cupmon_records::{BufferCompletion, Dump, DumpWriter, Layout, Record, RecordIter};

struct Args {
    size_mb: usize,
    runs: usize,
    fixtures: PathBuf,
    keep: Option<PathBuf>,
}

fn parse_args() -> Args {
    let mut a = Args {
        size_mb: 400,
        runs: 3,
        fixtures: PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/h200-cupti13.0"
        )),
        keep: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--size-mb" => a.size_mb = value.parse().expect("--size-mb N"),
            "--runs" => a.runs = value.parse().expect("--runs N"),
            "--fixtures" => a.fixtures = value.into(),
            "--keep" => a.keep = Some(value.into()),
            _ => panic!("unknown flag {flag}"),
        }
    }
    a
}

/// The chunk buffers of a fixture dump.
fn fixture_chunks(dir: &Path) -> (Dump, Vec<(BufferCompletion, Vec<u8>)>) {
    let dump = Dump::open(dir).expect("fixture dump");
    let mut reader = dump.chunks().expect("raw buffers");
    let mut out = Vec::new();
    while let Some(c) = reader.next_chunk().expect("chunk") {
        out.push((c.header.completion, c.data.to_vec()));
    }
    (dump, out)
}

/// Byte offset of the correlation id of a record kind, if it has one.
fn correlation_offset(record: &Record) -> Option<usize> {
    record
        .spec()
        .fields
        .iter()
        .find(|f| f.name == "correlation_id")
        .map(|f| f.offset)
}

/// `buf` with every correlation id raised by `shift` (a copy that looks like later work).
fn renumbered(buf: &[u8], layout: Layout, shift: u32) -> Vec<u8> {
    let mut out = buf.to_vec();
    for item in RecordIter::new(buf, layout).with_offsets() {
        let (offset, record) = item.expect("fixture records decode");
        if let Some(o) = correlation_offset(&record) {
            let id = record.correlation_id();
            if id != 0 {
                out[offset + o..offset + o + 4].copy_from_slice(&(id + shift).to_le_bytes());
            }
        }
    }
    out
}

/// Chunks of about 1 MB made only of the fixture's kernel records.
fn kernel_only_chunk(chunks: &[(BufferCompletion, Vec<u8>)], layout: Layout) -> Vec<u8> {
    let mut kernels = Vec::new();
    for (_, buf) in chunks {
        for item in RecordIter::new(buf, layout).with_offsets() {
            let (offset, record) = item.expect("decode");
            if let Record::Kernel(_) = record {
                let size = layout.record_size(record.kind().as_u32()).unwrap_or(0);
                kernels.extend_from_slice(&buf[offset..offset + size]);
            }
        }
    }
    let mut chunk = Vec::with_capacity(1 << 20);
    while chunk.len() + kernels.len() <= 1 << 20 {
        chunk.extend_from_slice(&kernels);
    }
    chunk
}

/// Write a dump of about `size` bytes repeating `template` chunks, renumbered per copy.
fn build_dump(
    dir: &Path,
    meta_of: &Dump,
    template: &[(BufferCompletion, Vec<u8>)],
    size: usize,
) -> Vec<Vec<u8>> {
    let layout = meta_of.layout().expect("layout");
    let mut w = DumpWriter::create(dir, meta_of.meta()).expect("create dump");
    for (ptr, name) in meta_of.kernel_names().sorted() {
        w.add_kernel_name(ptr, name).expect("names");
    }
    let per_copy: usize = template.iter().map(|(_, b)| b.len()).sum();
    let copies = size.div_ceil(per_copy);
    let mut in_memory = Vec::new();
    for copy in 0..copies {
        for (completion, buf) in template {
            let b = renumbered(buf, layout, (copy as u32) * 1_000_000);
            w.write_chunk(*completion, &b).expect("write chunk");
            in_memory.push(b);
        }
    }
    w.finish().expect("finish dump");
    in_memory
}

struct Count {
    records: u64,
    bytes: u64,
    secs: f64,
}

fn best(runs: usize, mut f: impl FnMut() -> (u64, u64)) -> Count {
    let mut best = Count {
        records: 0,
        bytes: 0,
        secs: f64::MAX,
    };
    for _ in 0..runs {
        let t = Instant::now();
        let (records, bytes) = f();
        let secs = t.elapsed().as_secs_f64();
        if secs < best.secs {
            best = Count {
                records,
                bytes,
                secs,
            };
        }
    }
    best
}

/// Decode every record of in-memory buffers, touching each record's correlation id.
fn decode_memory(bufs: &[Vec<u8>], layout: Layout) -> (u64, u64) {
    let (mut n, mut bytes, mut sum) = (0u64, 0u64, 0u64);
    for buf in bufs {
        for r in RecordIter::new(buf, layout) {
            let r = r.expect("decode");
            sum = sum.wrapping_add(u64::from(black_box(&r).correlation_id()));
            n += 1;
        }
        bytes += buf.len() as u64;
    }
    black_box(sum);
    (n, bytes)
}

/// Stream the dump file through the chunk reader and decode every record.
fn decode_file(dir: &Path) -> (u64, u64) {
    let dump = Dump::open(dir).expect("open");
    let layout = dump.layout().expect("layout");
    let mut reader = dump.chunks().expect("chunks");
    let (mut n, mut bytes, mut sum) = (0u64, 0u64, 0u64);
    while let Some(c) = reader.next_chunk().expect("chunk") {
        for r in RecordIter::new(c.data, layout) {
            sum = sum.wrapping_add(u64::from(black_box(&r.expect("decode")).correlation_id()));
            n += 1;
        }
        bytes += c.data.len() as u64;
    }
    black_box(sum);
    (n, bytes)
}

fn report(what: &str, c: &Count) {
    println!(
        "{what:<34} {:>11} records {:>8.1} MB  {:>7.3} s  {:>8.1} M records/s  {:>8.0} MB/s",
        c.records,
        c.bytes as f64 / 1e6,
        c.secs,
        c.records as f64 / c.secs / 1e6,
        c.bytes as f64 / c.secs / 1e6
    );
}

fn main() {
    let a = parse_args();
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = a.keep.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let size = a.size_mb << 20;

    let (torch, torch_chunks) = fixture_chunks(&a.fixtures.join("torch_mlp"));
    let layout = torch.layout().expect("layout");
    let mix_dir = root.join("torch_mlp_mix");
    let mix = build_dump(&mix_dir, &torch, &torch_chunks, size);

    let (cuda, cuda_chunks) = fixture_chunks(&a.fixtures.join("cuda_workload"));
    let mut all = torch_chunks.clone();
    all.extend(cuda_chunks);
    let kernel_chunk = kernel_only_chunk(&all, layout);
    let kernel_dir = root.join("kernel_only");
    let template = [(all[0].0, kernel_chunk)];
    let kernels = build_dump(&kernel_dir, &cuda, &template, size);

    println!(
        "CUPTI {} layout, one thread, best of {} runs",
        layout.version(),
        a.runs
    );
    let c = best(a.runs, || decode_memory(&mix, layout));
    report("torch_mlp mix, memory", &c);
    let c = best(a.runs, || decode_file(&mix_dir));
    report("torch_mlp mix, file", &c);
    let c = best(a.runs, || decode_memory(&kernels, layout));
    report("kernel-only, memory", &c);
    let c = best(a.runs, || decode_file(&kernel_dir));
    report("kernel-only, file", &c);
    let c = best(1, || {
        let (w, r) = cupmon_trace::decode_dump_to_window(&mix_dir, |_| {}).expect("window");
        black_box(&w);
        (w.events.len() as u64, r.buffer_bytes)
    });
    report("torch_mlp mix, full window", &c);
    if a.keep.is_some() {
        println!("dumps kept in {}", root.display());
    }
}
