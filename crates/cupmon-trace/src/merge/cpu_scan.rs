//! Pass 1 over a Kineto CPU trace: validate it as Python's `json.load` would,
//! and collect what the merge needs without keeping the events: the top-level
//! members, which events stay (as byte ranges to copy in pass 2), the External
//! id -> (pid, tid) map, the collective metadata of `record_param_comms` ops, and
//! the time range of the duration events.

use rustc_hash::{FxHashMap, FxHashSet};
use std::io::Read;
use std::ops::Range;

use super::cpu_event::{scan_event, Cat, ExternalId, Name, Ph};
use super::param_comms::ParamComms;
use super::span::TimeRange;
use super::stream::{format_size, StreamBuf, StreamError};
use crate::json::dict::DictSlots;
use crate::json::read::parse_document;
use crate::json::value::Value;

/// A top-level member of the CPU trace, in first-seen order.
#[derive(Debug)]
pub(crate) struct TopMember {
    pub key: String,
    /// The key as written (with its quotes).
    pub raw_key: Vec<u8>,
    /// The value's text; `None` for `traceEvents`, which is streamed.
    pub raw_value: Option<Vec<u8>>,
}

/// The kept events of `traceEvents`, as byte ranges of the (decompressed) file.
#[derive(Debug, Default)]
pub(crate) struct KeptEvents {
    /// The leading `M` events: cupmon's metadata goes right after them.
    pub head: Vec<Range<u64>>,
    pub tail: Vec<Range<u64>>,
    pub count: u64,
    pub dropped: u64,
}

/// A CPU op's External id, (pid, tid) and (ts, dur) in µs.
type OpCandidate = (i128, (i128, i128), (f64, f64));

#[derive(Debug, Default)]
pub(crate) struct CpuScan {
    pub members: Vec<TopMember>,
    /// `int(data["baseTimeNanoseconds"])` when present (an error text where Python raises).
    pub base_ns: Option<Result<i128, String>>,
    pub events: KeptEvents,
    /// (External id, (pid, tid), (ts, dur) in µs) of every CPU op, in trace order,
    /// until [`CpuScan::keep_external_ids`] keeps the ones the window asks about.
    candidates: Vec<OpCandidate>,
    /// External id -> (pid, tid) (later ops win, as in PyTorch's merge's dict).
    pub thread_by_external_id: FxHashMap<i128, (i128, i128)>,
    /// External id -> the op's (ts, dur) in µs after the base time (later ops win):
    /// where the window's calls linked to it must lie (`clock_align.rs`).
    pub span_by_external_id: FxHashMap<i128, (f64, f64)>,
    /// (External id, collective metadata) of every `record_param_comms` op, until
    /// [`CpuScan::keep_external_ids`] keeps the ones the window asks about.
    comms_candidates: Vec<(i128, Box<ParamComms>)>,
    /// External id -> collective metadata, for the complete trace's kernel args.
    pub comms_by_external_id: FxHashMap<i128, Box<ParamComms>>,
    pub range: TimeRange,
}

/// A pass-1 failure: where (absolute byte offset) and why.
#[derive(Debug)]
pub(crate) enum ScanError {
    Stream(StreamError),
    At { offset: u64, msg: String },
}

impl From<StreamError> for ScanError {
    fn from(e: StreamError) -> Self {
        Self::Stream(e)
    }
}

impl CpuScan {
    /// CPU ops seen so far (before [`CpuScan::keep_external_ids`]).
    #[cfg(feature = "internals")]
    pub fn candidate_count(&self) -> usize {
        self.candidates.len()
    }

    /// Build the External id map from the ops whose ids are in `wanted`.
    pub fn keep_external_ids(&mut self, wanted: &FxHashSet<i128>) {
        for (id, thread, span) in self.candidates.drain(..) {
            if wanted.contains(&id) {
                self.thread_by_external_id.insert(id, thread);
                self.span_by_external_id.insert(id, span);
            }
        }
        self.candidates = Vec::new();
        for (id, comms) in self.comms_candidates.drain(..) {
            if wanted.contains(&id) {
                self.comms_by_external_id.insert(id, comms);
            }
        }
        self.comms_candidates = Vec::new();
    }
}

/// Scan a CPU trace. No value may exceed `limit` bytes, nor may the top-level
/// members other than `traceEvents` (kept in memory for the output) together.
pub(crate) fn scan_cpu_trace(
    src: impl Read,
    limit: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<CpuScan, ScanError> {
    let mut s = StreamBuf::new(src, limit);
    let mut scan = CpuScan::default();
    let mut slots = DictSlots::default();
    let mut kept_bytes: u64 = 0;
    let (first, at) = s.step(|r| r.peek())?;
    if first != b'{' {
        // Python would load it and then fail on `data.get`: report "not an object"
        // only for valid JSON, a syntax error otherwise.
        s.step(|r| r.skip_value())?;
        s.expect_end()?;
        return Err(ScanError::At {
            offset: at.start,
            msg: "a Chrome trace must be a JSON object".to_owned(),
        });
    }
    s.step(|r| r.expect(b'{', "'{'"))?;
    let (empty, _) = s.step(|r| r.empty_close(b'}'))?;
    if !empty {
        loop {
            s.skip_ws()?;
            let (key, key_range) = s.step(|r| r.key_name().map(|k| k.decode()))?;
            let raw_key = s.bytes(&key_range);
            let raw_key = raw_key.to_vec();
            s.step(|r| r.expect(b':', "':' delimiter"))?;
            let at = key_range.start;
            let raw_value = if key == "traceEvents" {
                scan.events = KeptEvents::default();
                scan.candidates.clear();
                scan.comms_candidates.clear();
                scan.range = TimeRange::default();
                scan_events(&mut s, &mut scan, progress)?;
                None
            } else {
                s.skip_ws()?;
                let ((), range) = s.step(|r| r.skip_value())?;
                let bytes = s.bytes(&range);
                if key == "baseTimeNanoseconds" {
                    scan.base_ns = Some(base_time(bytes));
                }
                Some(bytes.to_vec())
            };
            kept_bytes += raw_value.as_ref().map_or(0, |v| v.len() as u64);
            // Python's dict: a repeated key keeps its first place, takes the last value.
            match slots.find(&scan.members, |m| &m.key, &key) {
                Some(i) => {
                    let old = std::mem::replace(&mut scan.members[i].raw_value, raw_value);
                    kept_bytes -= old.map_or(0, |v| v.len() as u64);
                }
                None => {
                    scan.members.push(TopMember {
                        key,
                        raw_key,
                        raw_value,
                    });
                    slots.pushed(&scan.members, |m| &m.key);
                }
            }
            if kept_bytes > limit {
                return Err(ScanError::At {
                    offset: at,
                    msg: format!(
                        "the top-level members other than traceEvents, which are kept in memory \
                         for the output, add up to more than the limit of {} here; raise \
                         max_event_bytes (--max-event-size on the command line) if they are \
                         legitimate",
                        format_size(limit)
                    ),
                });
            }
            let (more, _) = s.step(|r| r.comma_or(b'}'))?;
            if !more {
                break;
            }
        }
    }
    s.expect_end()?;
    Ok(scan)
}

/// `int(data["baseTimeNanoseconds"])`, which PyTorch's merge does not guard.
fn base_time(bytes: &[u8]) -> Result<i128, String> {
    let v =
        parse_document(bytes).ok_or_else(|| "baseTimeNanoseconds: unreadable value".to_owned())?;
    match v.py_int() {
        Ok(Some(i)) => Ok(i),
        Ok(None) => Err(format!(
            "baseTimeNanoseconds: {} is not an integer",
            match v {
                Value::Str(s) => format!("{s:?}"),
                other => other.py_str(),
            }
        )),
        Err(e) => Err(format!("baseTimeNanoseconds: {e}")),
    }
}

fn scan_events<R: Read>(
    s: &mut StreamBuf<R>,
    scan: &mut CpuScan,
    progress: &mut dyn FnMut(u64),
) -> Result<(), ScanError> {
    let (open, at) = s.step(|r| r.peek())?;
    match open {
        b'[' => {}
        b'{' | b'"' => {
            // list() of an empty dict or string is empty: PyTorch's merge accepts those.
            let (v, range) = s.step(|r| r.value())?;
            return match v {
                Value::Object(m) if m.is_empty() => Ok(()),
                Value::Str(t) if t.is_empty() => Ok(()),
                _ => Err(ScanError::At {
                    offset: range.start,
                    msg: "'traceEvents' must be a list of event objects".to_owned(),
                }),
            };
        }
        _ => {
            s.step(|r| r.skip_value())?;
            return Err(ScanError::At {
                offset: at.start,
                msg: "'traceEvents' must be a list".to_owned(),
            });
        }
    }
    s.step(|r| r.expect(b'[', "'['"))?;
    let (empty, _) = s.step(|r| r.empty_close(b']'))?;
    if empty {
        return Ok(());
    }
    let mut in_head = true;
    let mut prev_kept = false;
    let mut index: u64 = 0;
    loop {
        s.skip_ws()?;
        let (event, range) = s.step(scan_event)?;
        let Some(mut event) = event else {
            return Err(ScanError::At {
                offset: range.start,
                msg: format!("traceEvents[{index}] is not a JSON object"),
            });
        };
        if event.name == Name::Unhashable || (event.ph == Ph::X && event.cat == Cat::Unhashable) {
            return Err(ScanError::At {
                offset: range.start,
                msg: format!("traceEvents[{index}]: 'name' and 'cat' must not be lists or objects"),
            });
        }
        if event.ph == Ph::X && event.cat == Cat::Op {
            if let (Name::ParamComms, ExternalId::Id(id), Some(comms)) =
                (event.name, &event.external_id, event.comms.take())
            {
                scan.comms_candidates.push((*id, comms));
            }
            if let (Some(pid), Some(tid)) = (event.pid, event.tid) {
                match &event.external_id {
                    ExternalId::Id(id) => {
                        scan.candidates
                            .push((*id, (pid, tid), (event.ts, event.dur)))
                    }
                    ExternalId::Raises(why) => {
                        return Err(ScanError::At {
                            offset: range.start,
                            msg: format!("traceEvents[{index}]: External id: {why}"),
                        })
                    }
                    _ => {}
                }
            }
        }
        let dropped = (event.cat == Cat::Trace && event.name == Name::ProfilerSpan)
            || event.name == Name::ProfilerInstant;
        if dropped {
            scan.events.dropped += 1;
            prev_kept = false;
        } else {
            scan.events.count += 1;
            let to_head = in_head && event.ph == Ph::M;
            if !to_head && in_head {
                in_head = false;
                prev_kept = false;
            }
            let runs = if to_head {
                &mut scan.events.head
            } else {
                &mut scan.events.tail
            };
            match runs.last_mut() {
                Some(last) if prev_kept => last.end = range.end,
                _ => runs.push(range.clone()),
            }
            prev_kept = true;
            if event.ph == Ph::X && event.cat != Cat::Trace {
                scan.range.add(event.ts, event.dur);
            }
        }
        index += 1;
        if index.is_multiple_of(65536) {
            progress(s.offset());
        }
        let (more, _) = s.step(|r| r.comma_or(b']'))?;
        if !more {
            return Ok(());
        }
    }
}
