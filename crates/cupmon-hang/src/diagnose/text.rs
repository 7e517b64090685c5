//! The diagnosis in a few lines a person can act on.

use std::io::{self, Write};

use super::facts::RankFacts;
use super::{Diagnosis, RankState};

/// `rank 3 (pid 1234)`, or the dump's directory name without a rank.
pub fn rank_name(f: &RankFacts) -> String {
    match (f.rank, f.pid) {
        (Some(r), _) => format!("rank {r}"),
        (None, Some(p)) => format!("pid {p}"),
        (None, None) => f.dump.file_name().map_or_else(
            || f.dump.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
    }
}

/// `a, b and c`.
pub fn list(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    match items.len() {
        0 => "no rank".into(),
        1 => items[0].clone(),
        n => format!("{} and {}", items[..n - 1].join(", "), items[n - 1]),
    }
}

/// A Unix-ns time as `HH:MM:SS.mmm UTC`; `-` when unknown.
pub fn time(ns: Option<u64>) -> String {
    let Some(ns) = ns else {
        return "-".into();
    };
    let secs = ns / 1_000_000_000;
    let ms = (ns / 1_000_000) % 1000;
    format!(
        "{:02}:{:02}:{:02}.{ms:03} UTC",
        (secs / 3600) % 24,
        (secs / 60) % 60,
        secs % 60
    )
}

fn ago(written: Option<u64>, at: Option<u64>) -> String {
    match (written, at) {
        (Some(w), Some(a)) if w >= a => {
            format!(" ({:.1} s before its record)", (w - a) as f64 / 1e9)
        }
        _ => String::new(),
    }
}

fn where_(device: Option<u32>, stream: Option<u32>) -> String {
    match (device, stream) {
        (Some(d), Some(s)) => format!("device {d} stream {s}"),
        _ => "an unknown stream".into(),
    }
}

fn state_line(s: &RankState, written: Option<u64>) -> String {
    match s {
        RankState::ComputeKernel {
            name,
            device,
            stream,
            since_ns,
            launched_ns,
            recorded,
        } => {
            let (what, when, at, note) = match (since_ns, recorded) {
                (Some(_), _) => ("in", "running since", *since_ns, ""),
                (None, true) => (
                    "unfinished",
                    "launched at",
                    *launched_ns,
                    ", no start time from CUPTI",
                ),
                (None, false) => ("queued", "launched at", *launched_ns, ""),
            };
            format!(
                "{what} compute kernel {} on {}, {when} {}{}{note}",
                cupmon_records::demangle(name),
                where_(*device, *stream),
                time(at),
                ago(written, at)
            )
        }
        RankState::Collective { communicator, index, label, device, stream, since_ns, .. } => format!(
            "waiting in collective #{index} ({label}) of communicator {communicator} on device {device} \
             stream {stream}, {}{}",
            match since_ns {
                Some(_) => format!("running since {}", time(*since_ns)),
                None => "launched, not started".into(),
            },
            ago(written, *since_ns)
        ),
        RankState::HostStopped { last_launch_ns, last_call, blocked_in, last_end_ns } => {
            let mut line = format!(
                "no GPU work in flight; last launch {}{}, last operation ended {}",
                time(*last_launch_ns),
                ago(written, *last_launch_ns),
                time(*last_end_ns)
            );
            if let Some(b) = blocked_in {
                line.push_str(&format!("; a thread is blocked in {b}"));
            } else if let Some(c) = last_call {
                line.push_str(&format!("; last CUDA call {c}"));
            }
            line
        }
        RankState::Progressing { last_end_ns } => format!(
            "no hang record; its last operation ended {}",
            time(*last_end_ns)
        ),
    }
}

/// The verdict, the divergences, each rank's state and evidence.
pub fn write_text(out: &mut impl Write, d: &Diagnosis) -> io::Result<()> {
    writeln!(out, "{}", d.headline)?;
    for c in &d.culprits {
        writeln!(out, "  {}: {}", rank_name(&d.facts[c.index]), c.why)?;
    }
    for v in &d.divergences {
        let mut line = format!(
            "collectives: communicator {} diverges at #{}: {} launched {}",
            v.communicator,
            v.index,
            list(v.agreeing.iter().map(|&i| rank_name(&d.facts[i]))),
            v.expected.as_deref().unwrap_or("nothing")
        );
        for x in &v.diverged {
            line.push_str(&format!(
                "; {} launched {}",
                rank_name(&d.facts[x.rank]),
                x.launched.as_deref().unwrap_or("nothing")
            ));
        }
        if v.ambiguous {
            line.push_str(
                " (two groups of one size: the sequences alone cannot tell which is wrong)",
            );
        }
        writeln!(out, "{line}")?;
    }
    if d.divergences.is_empty() && d.facts.iter().any(|f| !f.nccl.is_empty()) {
        writeln!(out, "collectives: the ranks' sequences agree")?;
    }
    writeln!(out, "ranks:")?;
    for (v, f) in d.ranks.iter().zip(&d.facts) {
        let pid = f.pid.map_or_else(String::new, |p| format!(" (pid {p})"));
        writeln!(
            out,
            "  {}{pid}: {}",
            rank_name(f),
            state_line(&v.state, v.written_ns)
        )?;
        if let (Some(path), Some(trigger)) = (&v.record, &v.trigger) {
            writeln!(
                out,
                "    hang record {} at {}: {trigger}",
                path.display(),
                time(v.written_ns)
            )?;
        }
        let Some(r) = &f.record else { continue };
        for s in r
            .streams
            .iter()
            .filter(|s| !s.running.is_empty() || !s.queued.is_empty())
        {
            let last = s.recent.last().map_or_else(
                || "none".to_owned(),
                |o| {
                    format!(
                        "{} ended {}",
                        cupmon_records::demangle(&o.name),
                        time(o.end_ns)
                    )
                },
            );
            // A record from the forced flush with no start time is unfinished, not
            // known to be running.
            let timed = s.running.iter().filter(|o| o.start_ns.is_some()).count();
            let untimed = s.running.len() - timed;
            let untimed = if untimed > 0 {
                format!(", {untimed} unfinished with no start time")
            } else {
                String::new()
            };
            writeln!(
                out,
                "    {}: {timed} running{untimed}, {} queued; last completed: {last}",
                where_(s.device, s.stream),
                s.queued.len()
            )?;
        }
        for t in r.threads.iter().filter(|t| t.blocked_in.is_some()) {
            if let Some(b) = &t.blocked_in {
                writeln!(
                    out,
                    "    thread {}: blocked in {} since {}",
                    t.tid,
                    b.api,
                    time(Some(b.at_ns))
                )?;
            }
        }
        for n in &r.notes {
            writeln!(out, "    note: {n}")?;
        }
    }
    for w in &d.warnings {
        writeln!(out, "warning: {w}")?;
    }
    Ok(())
}
