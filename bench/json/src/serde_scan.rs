//! Pass 1 of the merge written with serde_json's streaming `Deserializer`
//! (over `io::Read`, byte offsets from a counting reader) and `RawValue` for
//! the top-level members: the same facts as cupmon-trace's own scan.

use std::cell::Cell;
use std::fmt;
use std::io::{self, Read};
use std::rc::Rc;

use cupmon_trace::internals::ScanSummary;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// Counts the bytes serde_json has taken from the reader.
pub struct Counting<R> {
    pub inner: R,
    pub count: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

pub fn scan(src: impl Read) -> Result<ScanSummary, serde_json::Error> {
    let count = Rc::new(Cell::new(0));
    let reader = Counting {
        inner: io::BufReader::with_capacity(1 << 20, src),
        count: count.clone(),
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let summary = de.deserialize_map(TopVisitor { count })?;
    de.end()?;
    Ok(summary)
}

struct TopVisitor {
    count: Rc<Cell<u64>>,
}

impl<'de> Visitor<'de> for TopVisitor {
    type Value = ScanSummary;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Chrome trace object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ScanSummary, A::Error> {
        let mut s = ScanSummary {
            top_level_keys: Vec::new(),
            base_ns: None,
            kept: 0,
            dropped: 0,
            head_runs: Vec::new(),
            tail_runs: Vec::new(),
            ops: 0,
            min_ts: f64::INFINITY,
            max_end_ts: 0.0,
        };
        let mut raw_members: Vec<(String, Box<RawValue>)> = Vec::new();
        let mut ops = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if !s.top_level_keys.contains(&key) {
                s.top_level_keys.push(key.clone());
            }
            if key == "traceEvents" {
                ops.clear();
                map.next_value_seed(EventsSeed {
                    count: self.count.clone(),
                    s: &mut s,
                    ops: &mut ops,
                })?;
            } else {
                let raw: Box<RawValue> = map.next_value()?;
                if key == "baseTimeNanoseconds" {
                    s.base_ns = raw.get().trim().parse().ok();
                }
                raw_members.push((key, raw));
            }
        }
        s.ops = ops.len();
        Ok(s)
    }
}

struct EventsSeed<'a> {
    count: Rc<Cell<u64>>,
    s: &'a mut ScanSummary,
    ops: &'a mut Vec<(i128, (i128, i128))>,
}

impl<'de> DeserializeSeed<'de> for EventsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let s = self.s;
        let (mut in_head, mut prev_kept) = (true, false);
        loop {
            let seed = EventSeed {
                count: self.count.clone(),
            };
            let Some((e, start, end)) = seq.next_element_seed(seed)? else {
                return Ok(());
            };
            if let (b'X', Cat::Op, Some(pid), Some(tid), Some(id)) =
                (e.ph, e.cat, e.pid, e.tid, e.external_id)
            {
                // Kept as the crate's scan keeps them, for the same memory.
                self.ops
                    .push((i128::from(id), (i128::from(pid), i128::from(tid))));
            }
            if (e.cat == Cat::Trace && e.name == Name::Span) || e.name == Name::Instant {
                s.dropped += 1;
                prev_kept = false;
                continue;
            }
            s.kept += 1;
            let to_head = in_head && e.ph == b'M';
            if !to_head && in_head {
                in_head = false;
                prev_kept = false;
            }
            let runs = if to_head {
                &mut s.head_runs
            } else {
                &mut s.tail_runs
            };
            match runs.last_mut() {
                Some(last) if prev_kept => last.1 = end,
                _ => runs.push((start, end)),
            }
            prev_kept = true;
            if e.ph == b'X' && e.cat != Cat::Trace {
                s.min_ts = if e.ts < s.min_ts { e.ts } else { s.min_ts };
                let end_ts = e.ts + if e.dur > 0.0 { e.dur } else { 0.0 };
                s.max_end_ts = if end_ts > s.max_end_ts {
                    end_ts
                } else {
                    s.max_end_ts
                };
            }
        }
    }
}

#[derive(Default, PartialEq, Clone, Copy)]
enum Cat {
    Trace,
    Op,
    #[default]
    Other,
}

#[derive(Default, PartialEq, Clone, Copy)]
enum Name {
    Span,
    Instant,
    #[default]
    Other,
}

#[derive(Default)]
struct Event {
    ph: u8,
    cat: Cat,
    name: Name,
    pid: Option<i64>,
    tid: Option<i64>,
    ts: f64,
    dur: f64,
    external_id: Option<i64>,
}

/// One event and its byte range: serde_json has peeked the opening `{` when
/// the seed runs, and has read exactly up to the closing `}` after it.
struct EventSeed {
    count: Rc<Cell<u64>>,
}

impl<'de> DeserializeSeed<'de> for EventSeed {
    type Value = (Event, u64, u64);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let start = self.count.get() - 1;
        let e = d.deserialize_map(EventVisitor)?;
        Ok((e, start, self.count.get()))
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Event;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
        let mut e = Event::default();
        while let Some(key) = map.next_key_seed(KeySeed(EVENT_KEYS))? {
            match key {
                0 => {
                    e.ph = map
                        .next_value_seed(StrSeed(&["X", "M"]))?
                        .map_or(0, |i| [b'X', b'M'][i])
                }
                1 => {
                    e.cat = match map.next_value_seed(StrSeed(&[
                        "Trace",
                        "cpu_op",
                        "user_annotation",
                    ]))? {
                        Some(0) => Cat::Trace,
                        Some(_) => Cat::Op,
                        None => Cat::Other,
                    }
                }
                2 => {
                    e.name = match map.next_value_seed(StrSeed(&[
                        "PyTorch Profiler (0)",
                        "Iteration Start: PyTorch Profiler",
                        "Record Window End",
                    ]))? {
                        Some(0) => Name::Span,
                        Some(_) => Name::Instant,
                        None => Name::Other,
                    }
                }
                3 => e.pid = map.next_value_seed(IntSeed)?,
                4 => e.tid = map.next_value_seed(IntSeed)?,
                5 => e.ts = map.next_value_seed(FloatSeed)?,
                6 => e.dur = map.next_value_seed(FloatSeed)?,
                7 => e.external_id = map.next_value_seed(ArgsSeed)?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(e)
    }
}

const EVENT_KEYS: &[&str] = &["ph", "cat", "name", "pid", "tid", "ts", "dur", "args"];

/// A key matched against a table without allocating: its index, or `usize::MAX`.
pub struct KeySeed(pub &'static [&'static str]);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = usize;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        Ok(self.0.iter().position(|k| *k == v).unwrap_or(usize::MAX))
    }
}

/// A value compared with a few strings: the index of the one it equals.
struct StrSeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for StrSeed {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_any(self)
    }
}

macro_rules! ignore_scalars {
    ($t:ty, $default:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<$t, E> {
            Ok($default)
        }
        fn visit_unit<E: de::Error>(self) -> Result<$t, E> {
            Ok($default)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<$t, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($default)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<$t, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($default)
        }
    };
}

impl<'de> Visitor<'de> for StrSeed {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|k| *k == v))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Option<usize>, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Option<usize>, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<usize>, E> {
        Ok(None)
    }
    ignore_scalars!(Option<usize>, None);
}

/// `isinstance(v, int)`: an integer literal.
struct IntSeed;

impl<'de> DeserializeSeed<'de> for IntSeed {
    type Value = Option<i64>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<i64>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for IntSeed {
    type Value = Option<i64>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<i64>, E> {
        Ok(Some(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<i64>, E> {
        Ok(i64::try_from(v).ok())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<i64>, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Option<i64>, E> {
        Ok(None)
    }
    ignore_scalars!(Option<i64>, None);
}

/// `_as_float(v)`.
struct FloatSeed;

impl<'de> DeserializeSeed<'de> for FloatSeed {
    type Value = f64;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<f64, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FloatSeed {
    type Value = f64;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
        Ok(v.trim().parse().unwrap_or(0.0))
    }
    ignore_scalars!(f64, 0.0);
}

/// `int(args["External id"])` of an args dict.
struct ArgsSeed;

impl<'de> DeserializeSeed<'de> for ArgsSeed {
    type Value = Option<i64>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<i64>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ArgsSeed {
    type Value = Option<i64>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<i64>, A::Error> {
        let mut id = None;
        while let Some(k) = map.next_key_seed(KeySeed(&["External id"]))? {
            if k == 0 {
                id = map.next_value_seed(IntSeed)?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(id)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Option<i64>, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Option<i64>, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<i64>, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Option<i64>, E> {
        Ok(None)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Option<i64>, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<i64>, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<i64>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}
