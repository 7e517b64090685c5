//! `combine`: the traces of several ranks as one, on one time axis. Each rank becomes
//! one process named `rank R` holding its CPU threads and its GPU streams
//! (`GPU d stream s`), so that Perfetto shows the ranks side by side; flows and
//! annotations are kept (flow ids made unique per rank). Ranks come from each
//! trace's `distributedInfo` (else the order given, which [`CombineStats::numbered`]
//! lists for the caller to say). Each rank's dropped-record and untimed counts are
//! kept in the combined `cupmon` block, and inputs whose time spans do not overlap
//! are listed ([`CombineStats::disjoint`]). Clocks: CUPTI's timestamps are
//! Unix ns per host, so the ranks of one host line up as they are; for several hosts
//! per-rank offsets can be given, and the skew seen at the ends of NCCL kernels (which
//! end together across ranks) is reported, with each rank's share of GPU busy time
//! spent in NCCL kernels.

mod collectives;
mod rank_facts;
mod remap;
mod skew;

use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::output::{is_gz, AtomicOutput};
use crate::{is_pftrace_path, PftraceStats, TraceError, TraceFormat};
pub use collectives::RankCollectives;
pub use rank_facts::{NumberedInput, RankSpan};
use remap::RankRemap;
pub use skew::RankSkew;

/// What a combine did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CombineStats {
    pub events: u64,
    /// Per input: its rank and event count, in input order.
    pub ranks: Vec<(i64, u64)>,
    /// Per rank after the first: the median difference of NCCL kernel ends against
    /// the lowest rank, where both have such kernels.
    pub skew: Vec<RankSkew>,
    /// Per rank with kernels: NCCL kernels' share of each device's busy time.
    pub collectives: Vec<RankCollectives>,
    /// What the Perfetto trace holds, when the output is one.
    pub pftrace: Option<PftraceStats>,
    /// Inputs without `distributedInfo`, numbered by their place in the list.
    pub numbered: Vec<NumberedInput>,
    /// Pairs of inputs whose time spans (offsets applied) do not overlap: not one
    /// job's ranks at one time, or a clock offset missing.
    pub disjoint: Vec<(RankSpan, RankSpan)>,
}

/// One input trace, read.
struct Input {
    path: PathBuf,
    trace: Value,
    rank: i64,
    /// The rank is the input's place in the list (no `distributedInfo.rank`).
    numbered: bool,
    base_ns: i128,
}

fn read(path: &Path, index: usize) -> Result<Input, TraceError> {
    let io = |err| TraceError::Io {
        path: path.to_path_buf(),
        what: "cannot read",
        err,
    };
    if is_pftrace_path(path) {
        return Err(TraceError::Input {
            file: path.display().to_string(),
            location: "file name".into(),
            msg: "a Perfetto protobuf trace; combine reads Chrome JSON traces (.json, \
                  .json.gz): combine those, into a .pftrace if you like"
                .into(),
        });
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let reader: Box<dyn Read> = if is_gz(path) {
        Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(file)))
    } else {
        Box::new(BufReader::new(file))
    };
    let trace: Value = serde_json::from_reader(reader).map_err(|e| TraceError::Input {
        file: path.display().to_string(),
        location: format!("line {} column {}", e.line(), e.column()),
        msg: e.to_string(),
    })?;
    if !trace.get("traceEvents").is_some_and(Value::is_array) {
        return Err(TraceError::Input {
            file: path.display().to_string(),
            location: "top level".into(),
            msg: "not a Chrome trace (no traceEvents list)".into(),
        });
    }
    let given = trace
        .pointer("/distributedInfo/rank")
        .and_then(Value::as_i64);
    let rank = given.unwrap_or(index as i64);
    let base_ns = trace
        .get("baseTimeNanoseconds")
        .and_then(|v| {
            v.as_i64()
                .map(i128::from)
                .or_else(|| v.as_u64().map(i128::from))
        })
        .unwrap_or(0);
    Ok(Input {
        path: path.to_path_buf(),
        trace,
        rank,
        numbered: given.is_none(),
        base_ns,
    })
}

/// Combine the traces at `inputs` into `output` (`.gz` by name, a Perfetto
/// trace for a `.pftrace` name); `offsets` shifts the events of a rank by that
/// many ns (another host's clock).
pub fn combine_traces(
    inputs: &[PathBuf],
    output: &Path,
    offsets: &[(i64, i64)],
) -> Result<CombineStats, TraceError> {
    combine_traces_as(inputs, output, offsets, None)
}

/// [`combine_traces`] in `format` (`None`: by the output's name).
pub fn combine_traces_as(
    inputs: &[PathBuf],
    output: &Path,
    offsets: &[(i64, i64)],
    format: Option<TraceFormat>,
) -> Result<CombineStats, TraceError> {
    let mut loaded = Vec::new();
    for (i, path) in inputs.iter().enumerate() {
        loaded.push(read(path, i)?);
    }
    // Two inputs of the same rank (two windows of one process, say) stay apart.
    let mut seen = std::collections::BTreeSet::new();
    for (i, input) in loaded.iter_mut().enumerate() {
        if !seen.insert(input.rank) {
            input.rank = 1000 + i as i64;
        }
    }
    let base = loaded.iter().map(|i| i.base_ns).min().unwrap_or(0);
    let offset_of = |rank: i64| {
        offsets
            .iter()
            .find(|(r, _)| *r == rank)
            .map_or(0, |&(_, ns)| ns)
    };
    let out = AtomicOutput::create(output)?;
    let mut w = out.trace_writer(TraceFormat::resolve(format, output), base)?;
    let mut stats = CombineStats::default();
    let mut skew = skew::SkewFinder::default();
    let mut collectives = collectives::CollectiveFinder::default();
    w.member(b"\"schemaVersion\"", b"1")?;
    w.member(b"\"displayTimeUnit\"", b"\"ms\"")?;
    if let Some(props) = loaded.iter().find_map(|i| i.trace.get("deviceProperties")) {
        let text = serde_json::to_vec(props).map_err(std::io::Error::other)?;
        w.member(b"\"deviceProperties\"", &text)?;
    }
    w.member(b"\"baseTimeNanoseconds\"", base.to_string().as_bytes())?;
    // The ranks' events are input events: copied as their JSON text (Chrome), or
    // read from it (Perfetto), as a CPU trace's are in a merge.
    w.events(b"\"traceEvents\"", |sink| {
        sink.input_events(&mut |out| {
            let mut first = true;
            for input in &loaded {
                let offset = offset_of(input.rank);
                let shift_us = ((input.base_ns - base) as f64 + offset as f64) / 1000.0;
                let remap = RankRemap::new(input.rank, &input.trace["traceEvents"]);
                let mut count = 0u64;
                for event in remap.metadata() {
                    emit(&mut *out, &mut first, &event)?;
                }
                for event in input.trace["traceEvents"].as_array().into_iter().flatten() {
                    collectives.note(input.rank, event, input.base_ns);
                    let Some(event) = remap.event(event, shift_us) else {
                        continue;
                    };
                    skew.note(input.rank, &event, base);
                    emit(&mut *out, &mut first, &event)?;
                    count += 1;
                }
                stats.events += count;
                stats.ranks.push((input.rank, count));
            }
            Ok(())
        })?;
        Ok(())
    })?;
    stats.skew = skew.medians();
    stats.collectives = collectives.finish(3);
    let mut spans = Vec::new();
    for input in &loaded {
        if input.numbered {
            stats.numbered.push(NumberedInput {
                rank: input.rank,
                file: input.path.clone(),
            });
        }
        if let Some((start, end)) = rank_facts::span_after_base(&input.trace) {
            let at = input.base_ns + i128::from(offset_of(input.rank));
            spans.push(RankSpan {
                rank: input.rank,
                file: input.path.clone(),
                start_ns: at + start,
                end_ns: at + end,
            });
        }
    }
    stats.disjoint = rank_facts::disjoint_pairs(&spans)
        .into_iter()
        .map(|(a, b)| (a.clone(), b.clone()))
        .collect();
    let kept: Vec<serde_json::Map<String, Value>> = loaded
        .iter()
        .map(|i| rank_facts::kept_counts(&i.trace))
        .collect();
    let per_rank = loaded
        .iter()
        .zip(&stats.ranks)
        .zip(&kept)
        .map(|((i, (rank, n)), kept)| {
            let mut entry = serde_json::json!({
                "rank": rank, "file": i.path.display().to_string(), "events": n,
                "rank_from": if i.numbered { "input order" } else { "distributedInfo" },
            });
            if let Some(entry) = entry.as_object_mut() {
                entry.extend(kept.clone());
            }
            entry
        });
    let mut info = serde_json::json!({
        "combined": per_rank.collect::<Vec<_>>(),
        "collective_end_skew_us": stats.skew.iter().map(|s| serde_json::json!({
            "rank": s.rank, "median_us": s.median_ns as f64 / 1000.0, "collectives": s.samples,
        })).collect::<Vec<_>>(),
    });
    if let (Some(total), Some(info)) = (rank_facts::total_dropped(&kept), info.as_object_mut()) {
        info.insert("dropped_records".to_owned(), total);
    }
    let name = serde_json::to_vec(&output.display().to_string()).map_err(std::io::Error::other)?;
    w.member(b"\"traceName\"", &name)?;
    let info = serde_json::to_vec(&info).map_err(std::io::Error::other)?;
    w.member(b"\"cupmon\"", &info)?;
    w.end()?;
    stats.pftrace = out.commit_trace(w)?;
    Ok(stats)
}

fn emit(w: &mut dyn Write, first: &mut bool, event: &Value) -> std::io::Result<()> {
    if !*first {
        w.write_all(b",")?;
    }
    *first = false;
    serde_json::to_writer(w, event).map_err(std::io::Error::other)
}
