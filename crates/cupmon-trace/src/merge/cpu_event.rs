//! What the merge reads of one CPU-trace event, parsed straight from its bytes.
//!
//! PyTorch's merge loads the whole trace into Python objects; cupmon looks at each
//! event once, keeps only these facts and copies the event's text unchanged.

use super::param_comms::{ParamComms, OP_NAME as PARAM_COMMS};
use crate::json::read::{RawNum, ReadResult, Reader};
use crate::json::value::{py_float_from_str, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Ph {
    X,
    M,
    #[default]
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Cat {
    /// "Trace": the profiler's own span, excluded from the time range.
    Trace,
    /// "cpu_op" or "user_annotation": carries an External id.
    Op,
    /// A list or dict: unhashable, so PyTorch's merge's `in {...}` raises.
    Unhashable,
    #[default]
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Name {
    /// "PyTorch Profiler (0)"
    ProfilerSpan,
    /// "Iteration Start: PyTorch Profiler" or "Record Window End"
    ProfilerInstant,
    /// "record_param_comms": PyTorch's op carrying a collective's metadata.
    ParamComms,
    Unhashable,
    #[default]
    Other,
}

/// A number's text or, for other types, the value (for Python's `float()`).
#[derive(Debug, Default)]
enum Num<'a> {
    #[default]
    Missing,
    Text(RawNum<'a>),
    Other(Value),
}

impl Num<'_> {
    /// PyTorch's merge's `_as_float(event.get(k, 0.0))`.
    fn as_float(&self) -> f64 {
        match self {
            Num::Missing => 0.0,
            Num::Text(n) => n.as_f64(),
            Num::Other(Value::Str(s)) => py_float_from_str(s).unwrap_or(0.0),
            Num::Other(v) => v.py_float().unwrap_or(0.0),
        }
    }
}

/// The outcome of `int(args["External id"])` in PyTorch's merge.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum ExternalId {
    /// No args dict, no key, null, or `int()` raised TypeError/ValueError.
    #[default]
    None,
    Id(i128),
    /// `int()` raised something PyTorch's merge does not catch (OverflowError).
    Raises(String),
}

#[derive(Debug, Default)]
pub(crate) struct CpuEvent {
    pub ph: Ph,
    pub cat: Cat,
    pub name: Name,
    /// Set only when the value is a JSON integer (Python `isinstance(v, int)`).
    pub pid: Option<i128>,
    pub tid: Option<i128>,
    /// `ts` and `dur` as PyTorch's merge's `_as_float` reads them.
    pub ts: f64,
    pub dur: f64,
    pub external_id: ExternalId,
    /// The collective metadata among the args (any event's; the scan keeps those of
    /// `record_param_comms` ops). `None` when the args have none of its keys.
    pub comms: Option<Box<ParamComms>>,
}

/// Parse one element of `traceEvents`. `Ok(None)`: the element is not an object.
pub(crate) fn scan_event(r: &mut Reader<'_>) -> ReadResult<Option<CpuEvent>> {
    if r.peek()? != b'{' {
        r.skip_value()?;
        return Ok(None);
    }
    r.pos += 1;
    let mut ev = CpuEvent::default();
    let (mut ts, mut dur) = (Num::Missing, Num::Missing);
    if !r.empty_close(b'}')? {
        loop {
            let key = r.key()?;
            let decoded;
            let k: &[u8] = if key.escaped {
                decoded = key.decode();
                decoded.as_bytes()
            } else {
                key.raw
            };
            match k {
                b"ph" => ev.ph = ph(r)?,
                b"cat" => ev.cat = cat(r)?,
                b"name" => ev.name = name(r)?,
                b"pid" => ev.pid = int_literal(r)?,
                b"tid" => ev.tid = int_literal(r)?,
                b"ts" => ts = num(r)?,
                b"dur" => dur = num(r)?,
                b"args" => (ev.external_id, ev.comms) = args_external_id(r)?,
                _ => r.skip_value()?,
            }
            if !r.comma_or(b'}')? {
                break;
            }
        }
    }
    if ev.ph == Ph::X && ev.cat != Cat::Trace {
        ev.ts = ts.as_float();
        ev.dur = dur.as_float();
    }
    Ok(Some(ev))
}

fn ph(r: &mut Reader<'_>) -> ReadResult<Ph> {
    if r.peek()? != b'"' {
        r.skip_value()?;
        return Ok(Ph::Other);
    }
    let s = r.string()?;
    Ok(if s.eq_str("X") {
        Ph::X
    } else if s.eq_str("M") {
        Ph::M
    } else {
        Ph::Other
    })
}

fn cat(r: &mut Reader<'_>) -> ReadResult<Cat> {
    match r.peek()? {
        b'"' => {
            let s = r.string()?;
            Ok(if s.eq_str("Trace") {
                Cat::Trace
            } else if s.eq_str("cpu_op") || s.eq_str("user_annotation") {
                Cat::Op
            } else {
                Cat::Other
            })
        }
        b'[' | b'{' => {
            r.skip_value()?;
            Ok(Cat::Unhashable)
        }
        _ => {
            r.skip_value()?;
            Ok(Cat::Other)
        }
    }
}

fn name(r: &mut Reader<'_>) -> ReadResult<Name> {
    match r.peek()? {
        b'"' => {
            let s = r.string()?;
            Ok(if s.eq_str("PyTorch Profiler (0)") {
                Name::ProfilerSpan
            } else if s.eq_str("Iteration Start: PyTorch Profiler") || s.eq_str("Record Window End")
            {
                Name::ProfilerInstant
            } else if s.eq_str(PARAM_COMMS) {
                Name::ParamComms
            } else {
                Name::Other
            })
        }
        b'[' | b'{' => {
            r.skip_value()?;
            Ok(Name::Unhashable)
        }
        _ => {
            r.skip_value()?;
            Ok(Name::Other)
        }
    }
}

/// A JSON integer literal (what Python's json makes an `int`), else None.
fn int_literal(r: &mut Reader<'_>) -> ReadResult<Option<i128>> {
    match r.peek()? {
        b'-' | b'0'..=b'9' => {
            let n = r.number()?;
            if !n.is_int {
                return Ok(None);
            }
            Ok(n.as_i128())
        }
        _ => {
            r.skip_value()?;
            Ok(None)
        }
    }
}

fn num<'a>(r: &mut Reader<'a>) -> ReadResult<Num<'a>> {
    match r.peek()? {
        b'-' | b'0'..=b'9' => Ok(Num::Text(r.number()?)),
        // `float()` of a list or dict raises TypeError: the default, without
        // building the container.
        b'[' | b'{' => {
            r.skip_value()?;
            Ok(Num::Missing)
        }
        _ => Ok(Num::Other(r.value()?)),
    }
}

/// `args.get("External id")` converted with `int()`, when args is a dict, and the
/// collective metadata's values as JSON text.
fn args_external_id(r: &mut Reader<'_>) -> ReadResult<(ExternalId, Option<Box<ParamComms>>)> {
    if r.peek()? != b'{' {
        r.skip_value()?;
        return Ok((ExternalId::None, None));
    }
    r.pos += 1;
    let mut id = ExternalId::None;
    let mut comms: Option<Box<ParamComms>> = None;
    if r.empty_close(b'}')? {
        return Ok((id, comms));
    }
    loop {
        let key = r.key()?;
        let comms_key = if key.escaped {
            ParamComms::key_index(key.decode().as_bytes())
        } else {
            ParamComms::key_index(key.raw)
        };
        if let Some(index) = comms_key {
            r.peek()?;
            let start = r.pos;
            r.skip_value()?;
            comms
                .get_or_insert_with(Box::default)
                .set(index, &r.b[start..r.pos]);
        } else if key.eq_str("External id") {
            id = match r.peek()? {
                b'-' | b'0'..=b'9' => match r.number()? {
                    n if n.is_int => n.as_i128().map_or_else(
                        || ExternalId::Raises("External id is out of range".to_owned()),
                        ExternalId::Id,
                    ),
                    n => external_id_from(Value::from_num(n)),
                },
                // `int()` of a list or dict raises TypeError: no id.
                b'[' | b'{' => {
                    r.skip_value()?;
                    ExternalId::None
                }
                _ => external_id_from(r.value()?),
            };
        } else {
            r.skip_value()?;
        }
        if !r.comma_or(b'}')? {
            return Ok((id, comms));
        }
    }
}

/// `int(v)` of a non-integer External id, as PyTorch's merge handles it.
fn external_id_from(v: Value) -> ExternalId {
    match v {
        Value::Null => ExternalId::None,
        v => match v.py_int() {
            Ok(Some(i)) => ExternalId::Id(i),
            Ok(None) => ExternalId::None,
            Err(e) => ExternalId::Raises(e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(s: &str) -> CpuEvent {
        let mut r = Reader::new(s.as_bytes());
        scan_event(&mut r).expect("parse").expect("object")
    }

    #[test]
    fn reads_the_fields_the_merge_needs() {
        let e = scan(
            r#"{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":466,"tid":498,"ts":5122246331940.841,"dur":202.423,"args":{"External id":513,"Ev Idx":0}} "#,
        );
        assert_eq!(e.ph, Ph::X);
        assert_eq!(e.cat, Cat::Op);
        assert_eq!(e.name, Name::Other);
        assert_eq!((e.pid, e.tid), (Some(466), Some(498)));
        assert_eq!(e.ts, 5122246331940.841);
        assert_eq!(e.dur, 202.423);
        assert_eq!(e.external_id, ExternalId::Id(513));
    }

    #[test]
    fn the_collective_metadata_of_record_param_comms_is_kept_as_json_text() {
        let e = scan(
            r#"{"ph":"X","cat":"cpu_op","name":"record_param_comms","args":{"External id":9,"Collective name":"allreduce","In msg nelems":1024,"Out msg nelems":1024,"Group size":2,"dtype":"Float","Process Group Name":"0","Process Group Ranks":"[0, 1]","Rank":1}} "#,
        );
        assert_eq!(e.name, Name::ParamComms);
        assert_eq!(e.external_id, ExternalId::Id(9));
        let args = e.comms.expect("comms").kernel_args();
        assert_eq!(args[0], ("Collective name", "\"allreduce\"".to_owned()));
        assert_eq!(args[1], ("In msg nelems", "1024".to_owned()));
        assert_eq!(args.last().unwrap(), &("out_msg_bytes", "4096".to_owned()));
        assert!(scan(r#"{"name":"aten::mm","args":{"External id":3}} "#)
            .comms
            .is_none());
    }

    #[test]
    fn python_conversions_apply() {
        let e = scan(
            r#"{"ph":"\u0058","cat":["x"],"name":"Record Window End","pid":1.0,"tid":"2","ts":"12.5","args":{"External id":"7"},"dur":null} "#,
        );
        assert_eq!(e.ph, Ph::X);
        assert_eq!(e.cat, Cat::Unhashable);
        assert_eq!(e.name, Name::ProfilerInstant);
        assert_eq!((e.pid, e.tid), (None, None));
        assert_eq!((e.ts, e.dur), (12.5, 0.0));
        assert_eq!(e.external_id, ExternalId::Id(7));
        let e = scan(r#"{"args":{"External id":Infinity}} "#);
        assert!(matches!(e.external_id, ExternalId::Raises(_)));
    }
}
