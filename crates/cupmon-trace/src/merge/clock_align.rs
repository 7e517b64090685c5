//! The window's clock against the CPU trace's (complete merges only; `--exact` keeps
//! PyTorch's output and only warns). torch.profiler stamps its CPU ops with the
//! CPU's cycle counter converted by its own line, measured over the profiled span;
//! a window whose records were on that counter too is either converted by cupmon
//! (a line fitted to clock samples, which can be minutes or a few milliseconds
//! long and then extrapolated: its offset at the profiled steps can be off by
//! microseconds) or not converted at all (PyTorch's own monitor writes the raw
//! counts when torch.profiler's callback is set: every op would sit at ts 0).
//!
//! Each CUDA call made inside a CPU op carries the op's id (CUPTI's CUSTOM0
//! external correlation), and must lie within that op. Those calls place the
//! window: a converted window is shifted by the middle of the shifts that put
//! every such call inside its op (when it is not already so); a window on the raw
//! counter gets the line (ns per tick and offset) with the widest such margin,
//! found by a search over the rate (the margin is a concave function of it).

use cupmon_records::clock::is_foreign;
use rustc_hash::FxHashMap;

use super::window_input::{Lazy, MergeEvent, MergeWindow};

/// CUPTI's CUSTOM0 external correlation: Kineto's CPU ops.
const CPU_OP_EXTERNAL_KIND: i128 = 3;

pub use cupmon_window::ClockAlignment;

/// One linked call: its start and end, and its op's, in ns (the call's on the
/// window's clock, the op's after the CPU trace's base time).
#[derive(Debug, Clone, Copy)]
struct Link {
    call: (i128, i128),
    op: (f64, f64),
}

/// How to align `window` to the CPU ops in `spans` (External id -> (ts, dur) in µs
/// after `base_ns`), or `None` when its clock is already the CPU trace's (Unix
/// stamps, never converted) or nothing would change.
pub(crate) fn plan(
    window: &MergeWindow,
    spans: &FxHashMap<i128, (f64, f64)>,
    base_ns: i128,
) -> Option<ClockAlignment> {
    let foreign = foreign_records(window);
    let converted = window
        .cupmon
        .as_ref()
        .is_some_and(|c| c.clock_converted > 0);
    if foreign == 0 && !converted {
        return None;
    }
    let links = links(window, spans, base_ns, foreign > 0);
    let count = links.len() as u64;
    if foreign > 0 {
        let Some((slope, offset)) = widest_line(&links) else {
            return Some(ClockAlignment {
                method: "none",
                foreign_records: foreign,
                shift_ns: 0,
                ns_per_tick_ppb: None,
                linked_calls: count,
                outside_before: count,
                outside_after: count,
                anchor: 0,
            });
        };
        let a0 = links[0].call.0;
        let map = |t: i128| offset + slope * (t - a0) as f64;
        return Some(ClockAlignment {
            method: "line",
            foreign_records: foreign,
            shift_ns: (map(a0) - a0 as f64).round() as i64,
            ns_per_tick_ppb: Some((slope * 1e9).round() as i64),
            linked_calls: count,
            outside_before: count,
            outside_after: outside(&links, map),
            anchor: a0,
        });
    }
    let before = outside(&links, |t| t as f64);
    if before == 0 {
        return None;
    }
    let (lo, hi) = shift_bounds(&links);
    let shift = ((lo + hi) / 2.0).round();
    let after = outside(&links, |t| t as f64 + shift);
    (after < before).then_some(ClockAlignment {
        method: "shift",
        foreign_records: 0,
        shift_ns: shift as i64,
        ns_per_tick_ppb: None,
        linked_calls: count,
        outside_before: before,
        outside_after: after,
        anchor: 0,
    })
}

/// Apply `plan` to the window's times (0, CUPTI's "no time", stays 0).
pub(crate) fn apply(window: &mut MergeWindow, plan: &ClockAlignment) {
    let map: Box<dyn Fn(i128) -> i128> = match (plan.method, plan.ns_per_tick_ppb) {
        ("shift", _) => {
            let shift = i128::from(plan.shift_ns);
            Box::new(move |t| if t == 0 { 0 } else { t + shift })
        }
        ("line", Some(ppb)) => {
            // The line through the first linked call's start: t -> t + shift there.
            let a0 = plan.anchor;
            let at_a0 = a0 + i128::from(plan.shift_ns);
            let slope = ppb as f64 / 1e9;
            Box::new(move |t| {
                if is_foreign_ns(t) {
                    at_a0 + (slope * (t - a0) as f64).round() as i128
                } else {
                    t
                }
            })
        }
        _ => return,
    };
    for event in &mut window.events {
        match event {
            MergeEvent::Gpu(g) => {
                g.start_ns = map(g.start_ns);
                g.end_ns = map(g.end_ns);
            }
            MergeEvent::Api(a) => {
                a.start_ns = map(a.start_ns);
                a.end_ns = map(a.end_ns);
                a.end_ns_get = map(a.end_ns_get);
            }
            MergeEvent::Overhead(o) => {
                for t in [&mut o.start_ns, &mut o.end_ns, &mut o.start_ns_get] {
                    if let Lazy::Value(v) = t {
                        *v = map(*v);
                    }
                }
            }
            MergeEvent::ExternalCorrelation(x) => x.end_ns_get = map(x.end_ns_get),
            MergeEvent::Other { end_ns } => *end_ns = map(*end_ns),
            // Memory events come from cupmon's own windows, never on a raw counter.
            MergeEvent::Extra(_) => {}
        }
    }
    let info = window.cupmon.get_or_insert_with(|| crate::CupmonInfo {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        ..Default::default()
    });
    info.clock_alignment = Some(plan.clone());
}

fn is_foreign_ns(t: i128) -> bool {
    u64::try_from(t).is_ok_and(is_foreign)
}

/// Timed records whose start is on another clock than Unix ns.
fn foreign_records(window: &MergeWindow) -> u64 {
    let starts = window.events.iter().filter_map(|e| match e {
        MergeEvent::Gpu(g) => Some(g.start_ns),
        MergeEvent::Api(a) => Some(a.start_ns),
        _ => None,
    });
    starts.filter(|&t| is_foreign_ns(t)).count() as u64
}

/// The CUDA calls of the window linked to an op of `spans`, by start (on the
/// foreign clock only, when `foreign`).
fn links(
    window: &MergeWindow,
    spans: &FxHashMap<i128, (f64, f64)>,
    base_ns: i128,
    foreign: bool,
) -> Vec<Link> {
    let mut op_of: FxHashMap<i128, i128> = FxHashMap::default();
    for event in &window.events {
        if let MergeEvent::ExternalCorrelation(x) = event {
            if matches!(x.external_kind.get(), Ok(CPU_OP_EXTERNAL_KIND)) && x.correlation_id != 0 {
                op_of.insert(x.correlation_id, x.external_id);
            }
        }
    }
    let base = base_ns as f64;
    let mut links: Vec<Link> = window
        .events
        .iter()
        .filter_map(|e| match e {
            MergeEvent::Api(a) if a.start_ns > 0 && a.end_ns >= a.start_ns => Some(a),
            _ => None,
        })
        .filter(|a| !foreign || is_foreign_ns(a.start_ns))
        .filter_map(|a| {
            let (ts, dur) = spans.get(op_of.get(&a.correlation_id)?)?;
            let start = base + ts * 1000.0;
            Some(Link {
                call: (a.start_ns, a.end_ns),
                op: (start, start + dur * 1000.0),
            })
        })
        .collect();
    links.sort_by_key(|l| l.call.0);
    links
}

/// Calls outside their op once mapped by `map`.
fn outside(links: &[Link], map: impl Fn(i128) -> f64) -> u64 {
    links
        .iter()
        .filter(|l| map(l.call.0) < l.op.0 || map(l.call.1) > l.op.1)
        .count() as u64
}

/// The shifts `[lo, hi]` that put every call inside its op (`lo > hi`: none does).
fn shift_bounds(links: &[Link]) -> (f64, f64) {
    links.iter().fold((f64::MIN, f64::MAX), |(lo, hi), l| {
        (
            lo.max(l.op.0 - l.call.0 as f64),
            hi.min(l.op.1 - l.call.1 as f64),
        )
    })
}

/// The line `(ns per tick, Unix ns at the first call's start)` that leaves the
/// widest margin between the calls and their ops' ends, when the calls span at
/// least 1 ms of ticks (a rate needs a span).
fn widest_line(links: &[Link]) -> Option<(f64, f64)> {
    let first = links.first()?;
    let last = links.last()?;
    if last.call.1 - first.call.0 < 1_000_000 {
        return None;
    }
    let a0 = first.call.0;
    let s0 = first.op.0;
    // Centred on the first call and its op, so that f64 keeps every ns.
    let pts: Vec<(f64, f64, f64, f64)> = links
        .iter()
        .map(|l| {
            (
                (l.call.0 - a0) as f64,
                (l.call.1 - a0) as f64,
                l.op.0 - s0,
                l.op.1 - s0,
            )
        })
        .collect();
    // For a rate m, the offsets c with s <= c + m a and c + m b <= e for every call.
    let bounds = |m: f64| {
        pts.iter()
            .fold((f64::MIN, f64::MAX), |(lo, hi), &(a, b, s, e)| {
                (lo.max(s - m * a), hi.min(e - m * b))
            })
    };
    let margin = |m: f64| {
        let (lo, hi) = bounds(m);
        hi - lo
    };
    // Cycle counters tick at 0.1-10 per ns (clock.rs); the margin is concave in m.
    let (mut lo, mut hi) = (0.1f64, 10.0f64);
    for _ in 0..200 {
        let m1 = lo + (hi - lo) / 3.0;
        let m2 = hi - (hi - lo) / 3.0;
        if margin(m1) < margin(m2) {
            lo = m1;
        } else {
            hi = m2;
        }
    }
    let m = (lo + hi) / 2.0;
    let (clo, chi) = bounds(m);
    Some((m, s0 + (clo + chi) / 2.0))
}
