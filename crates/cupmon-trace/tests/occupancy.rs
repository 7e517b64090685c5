//! `kernel_occupancy` against NVIDIA's own occupancy calculator: thousands of
//! launches, random and at the edges, on GPUs from Maxwell to Blackwell, run
//! through `tools/occupancy-oracle` (CUDA 13.0's `cuda_occupancy.h` fed as Kineto
//! feeds it). Every field must agree, and so must the text Kineto prints.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use cupmon_trace::{kernel_occupancy, kineto_float_text, DeviceLimits, LaunchConfig};

/// (name, computeMajor, computeMinor, maxThreadsPerMultiprocessor,
/// sharedMemPerMultiprocessor, sharedMemPerBlockOptin, numSms), as the driver
/// reports them; every one has 1024 threads, 65536 registers and 48 KiB a block.
const GPUS: &[(&str, i64, i64, i64, u64, u64, i64)] = &[
    ("H200", 9, 0, 2048, 233_472, 232_448, 132),
    ("H100 PCIe", 9, 0, 2048, 233_472, 232_448, 114),
    ("A100", 8, 0, 2048, 167_936, 166_912, 108),
    ("RTX 3090", 8, 6, 1536, 102_400, 101_376, 82),
    ("Jetson AGX Orin", 8, 7, 1536, 167_936, 166_912, 16),
    ("L4", 8, 9, 1536, 102_400, 101_376, 58),
    ("V100", 7, 0, 2048, 98_304, 98_304, 80),
    ("T4", 7, 5, 1024, 65_536, 65_536, 40),
    ("P100", 6, 0, 2048, 65_536, 49_152, 56),
    ("GTX 1080", 6, 1, 2048, 98_304, 49_152, 20),
    ("GTX 980", 5, 2, 2048, 98_304, 49_152, 16),
    ("GTX 750 Ti", 5, 0, 2048, 65_536, 49_152, 5),
    ("B200", 10, 0, 2048, 233_472, 232_448, 148),
    ("B300", 10, 3, 2048, 233_472, 232_448, 148),
    ("Thor", 11, 0, 1536, 233_472, 232_448, 20),
    ("RTX 5090", 12, 0, 1536, 102_400, 101_376, 170),
    ("GB10", 12, 1, 1536, 102_400, 101_376, 48),
    // Unknown to CUDA 13.0's calculator: both sides must fail.
    ("sm_107", 10, 7, 2048, 233_472, 232_448, 20),
    ("sm_130", 13, 0, 2048, 233_472, 232_448, 20),
];

fn devices() -> Vec<DeviceLimits> {
    let mut devices: Vec<DeviceLimits> = GPUS
        .iter()
        .enumerate()
        .map(
            |(id, &(name, major, minor, threads, smem_sm, optin, sms))| {
                let entry = serde_json::json!({
                    "id": id, "name": name, "totalGlobalMem": 1u64 << 34,
                    "computeMajor": major, "computeMinor": minor,
                    "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": threads,
                    "regsPerBlock": 65536, "warpSize": 32,
                    "sharedMemPerBlock": 49152, "numSms": sms,
                    "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": optin,
                    "sharedMemPerMultiprocessor": smem_sm
                });
                DeviceLimits::from_kineto_json(&entry).expect(name)
            },
        )
        .collect();
    // The driver's reserve given explicitly (none, on a Hopper), and a device the
    // calculator rejects (no SMs).
    let mut no_reserve = devices[0].clone();
    no_reserve.reserved_shared_mem_per_block = 0;
    let mut no_sms = devices[0].clone();
    no_sms.num_sms = 0;
    devices.extend([no_reserve, no_sms]);
    devices
}

/// splitmix64: the same launches on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.next() as usize % items.len()]
    }
}

fn launch(grid: [i32; 3], block: [i32; 3], regs: u16, smem: (i32, i32)) -> LaunchConfig {
    LaunchConfig {
        grid,
        block,
        registers_per_thread: regs,
        static_shared_memory: smem.0,
        dynamic_shared_memory: smem.1,
    }
}

fn launches(d: &DeviceLimits, rng: &mut Rng) -> Vec<LaunchConfig> {
    const THREADS: [i32; 17] = [
        1, 31, 32, 33, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024, 1025, 1536, 2048,
    ];
    const REGS: [u16; 14] = [0, 1, 16, 24, 32, 40, 64, 72, 96, 128, 168, 255, 256, 257];
    let sms = d.num_sms.max(1);
    let per_block = d.shared_mem_per_block as i32;
    let reserved = d.reserved_shared_mem_per_block as i32;
    let smem_edges = [
        (0, 0),
        (0, 1),
        (0, per_block - reserved),
        (0, per_block - reserved + 1),
        (per_block - reserved, 0),
        (4096, per_block - reserved - 4096),
        (0, d.shared_mem_per_block_optin as i32),
        (0, d.shared_mem_per_multiprocessor as i32),
    ];
    let mut out = Vec::new();
    for threads in THREADS {
        for regs in REGS {
            out.push(launch([4 * sms, 1, 1], [threads, 1, 1], regs, (0, 0)));
        }
        for smem in smem_edges {
            out.push(launch([sms, 1, 1], [threads, 1, 1], 32, smem));
        }
    }
    // Blocks per SM around the calculator's answer, and grids whose block count
    // overflows C's int (Kineto multiplies in int).
    for grid in [
        [1, 1, 1],
        [sms - 1, 1, 1],
        [sms * 3, 2, 1],
        [i32::MAX, 1, 1],
    ] {
        out.push(launch(grid, [16, 16, 1], 40, (0, 0)));
    }
    out.push(launch([65_536, 65_535, 2], [4, 1, 1], 16, (0, 0)));
    out.push(launch([1, 1, 1], [0, 1, 1], 16, (0, 0)));
    let smem_sm = d.shared_mem_per_multiprocessor as i64;
    for _ in 0..400 {
        let block = [
            rng.range(1, 1024),
            rng.pick(&[1, 1, 1, 2, 4, 8]),
            rng.pick(&[1, 1, 1, 1, 2]),
        ];
        let x_choices = [
            1,
            i64::from(sms),
            2 * i64::from(sms),
            rng.range(1, 10_000),
            rng.range(1, i64::from(i32::MAX)),
        ];
        let y_choices = [1, 1, 1, rng.range(1, 65_535)];
        let z_choices = [1, 1, 1, 1, rng.range(1, 64)];
        let grid = [
            rng.pick(&x_choices),
            rng.pick(&y_choices),
            rng.pick(&z_choices),
        ];
        let regs = rng.range(0, 260) as u16;
        let static_choices = [0, 0, rng.range(0, 65_536)];
        let dynamic_choices = [0, rng.range(0, 16_384), rng.range(0, smem_sm + 4096)];
        let smem = (rng.pick(&static_choices), rng.pick(&dynamic_choices));
        out.push(launch(
            grid.map(|v| v as i32),
            block.map(|v| v as i32),
            regs,
            (smem.0 as i32, smem.1 as i32),
        ));
    }
    out
}

fn oracle_input(d: &DeviceLimits, l: &LaunchConfig) -> String {
    format!(
        "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n",
        d.compute_major,
        d.compute_minor,
        d.max_threads_per_block,
        d.max_threads_per_multiprocessor,
        d.regs_per_block,
        d.regs_per_multiprocessor,
        d.warp_size,
        d.shared_mem_per_block,
        d.shared_mem_per_multiprocessor,
        d.num_sms,
        d.shared_mem_per_block_optin,
        d.reserved_shared_mem_per_block,
        l.registers_per_thread,
        l.static_shared_memory,
        l.dynamic_shared_memory,
        l.block[0],
        l.block[1],
        l.block[2],
        l.grid[0],
        l.grid[1],
        l.grid[2],
    )
}

/// The line the oracle should print for `l` on `d`, from cupmon's code.
fn expected_line(d: &DeviceLimits, l: &LaunchConfig) -> String {
    let o = kernel_occupancy(d, l);
    let limits = match o.limits {
        Some(x) => format!(
            "0 {} {} {} {} {} {} {} {} {}",
            x.active_blocks,
            x.limiting_factors,
            x.by_registers,
            x.by_shared_mem,
            x.by_warps,
            x.by_blocks,
            x.by_barriers,
            x.allocated_registers_per_block,
            x.allocated_shared_mem_per_block
        ),
        None => "failed".to_owned(),
    };
    format!(
        "{limits} {} {} {} {}",
        kineto_float_text(o.blocks_per_sm),
        kineto_float_text(o.warps_per_sm),
        o.torch_2_11_percent(),
        o.achieved_occupancy_percent.unwrap_or(-100),
    )
}

/// The oracle's line, its status and limits folded to "failed" when it failed
/// (the header leaves its result half filled then).
fn oracle_line(line: &str) -> String {
    let fields: Vec<&str> = line.split(' ').collect();
    assert_eq!(fields.len(), 14, "oracle line: {line}");
    let limits = if fields[0] == "0" {
        fields[..10].join(" ")
    } else {
        "failed".to_owned()
    };
    // A NaN (a zero-block grid on a device without SMs) is bare in Kineto's
    // output; cupmon quotes it.
    let float = |f: &str| {
        if f.contains("nan") {
            "\"nan\"".to_owned()
        } else {
            f.to_owned()
        }
    };
    format!(
        "{limits} {} {} {} {}",
        float(fields[10]),
        float(fields[11]),
        fields[12],
        fields[13]
    )
}

/// Runs the oracle; `None` (after a SKIPPED line) when it cannot be built here.
fn run_oracle(input: String) -> Option<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/occupancy-oracle/run.sh");
    let mut child = Command::new("bash")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let writer = std::thread::spawn(move || {
        // A failed build exits before reading: a broken pipe is no error here.
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("piped stdout")
        .read_to_string(&mut stdout)
        .expect("oracle output is text");
    let out = child.wait_with_output().expect("oracle ends");
    writer.join().expect("writer thread");
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => Some(stdout),
        Some(3) => {
            cupmon_test_skip::skipped!("{}", stderr.trim());
            None
        }
        _ => panic!("occupancy oracle failed ({}): {stderr}", out.status),
    }
}

#[test]
fn kernel_occupancy_matches_cuda_occupancy_header() {
    let mut rng = Rng(0x0cc0_9a4c_7e57_2026);
    let cases: Vec<(DeviceLimits, LaunchConfig)> = devices()
        .into_iter()
        .flat_map(|d| {
            launches(&d, &mut rng)
                .into_iter()
                .map(move |l| (d.clone(), l))
        })
        .collect();
    let input: String = cases.iter().map(|(d, l)| oracle_input(d, l)).collect();
    let Some(output) = run_oracle(input) else {
        return;
    };
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines.len(), cases.len(), "one oracle line per launch");
    let mut mismatches = Vec::new();
    let mut computed = 0;
    for ((d, l), line) in cases.iter().zip(&lines) {
        let (want, got) = (oracle_line(line), expected_line(d, l));
        computed += usize::from(!want.starts_with("failed"));
        if want != got {
            mismatches.push(format!(
                "sm_{}{} {l:?}\n  header: {want}\n  cupmon: {got}",
                d.compute_major, d.compute_minor
            ));
        }
    }
    eprintln!(
        "occupancy: {} launches compared with cuda_occupancy.h (the header computed {computed}, failed {}), {} mismatches",
        cases.len(),
        cases.len() - computed,
        mismatches.len()
    );
    assert!(
        computed > cases.len() / 2,
        "most launches must reach the calculation"
    );
    assert!(
        mismatches.is_empty(),
        "{}",
        mismatches[..mismatches.len().min(20)].join("\n")
    );
}
