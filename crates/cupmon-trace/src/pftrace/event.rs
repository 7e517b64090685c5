//! One event of an input trace's JSON text, read into the typed model for the
//! conversion: the fields that decide where and when it goes (phase, name,
//! category, pid, tid, ts, dur, flow ids, scope) and where its `args` object
//! lies, without building values.

use std::borrow::Cow;

use crate::event::{Args, Id, Phase, Scope, TraceEvent};
use crate::json::read::{RawNum, RawStr, ReadResult, Reader};

/// A string's text (borrowed unless it has escapes).
pub(super) fn text<'a>(s: RawStr<'a>) -> Cow<'a, str> {
    if s.escaped {
        return Cow::Owned(s.decode());
    }
    match std::str::from_utf8(s.raw) {
        Ok(t) => Cow::Borrowed(t),
        Err(_) => Cow::Owned(String::from_utf8_lossy(s.raw).into_owned()),
    }
}

/// A scalar as an [`Id`]: integers as such, strings as their text, other
/// values (floats, `null`, objects) as their JSON text.
fn id<'a>(r: &mut Reader<'a>) -> ReadResult<Id<'a>> {
    match r.peek()? {
        b'"' => Ok(Id::Text(text(r.string()?))),
        b'-' | b'0'..=b'9' => {
            let n = r.number()?;
            Ok(match small_int(n).or_else(|| n.as_i128()) {
                Some(i) => Id::Int(i),
                None => Id::Text(Cow::Owned(String::from_utf8_lossy(n.text).into_owned())),
            })
        }
        _ => {
            let start = r.pos;
            r.skip_value()?;
            let raw = &r.b[start..r.pos];
            Ok(Id::Text(Cow::Owned(
                String::from_utf8_lossy(raw).into_owned(),
            )))
        }
    }
}

/// An integer of up to 18 digits, the common case of pids and tids, without
/// the checked 128-bit arithmetic of [`RawNum::as_i128`].
#[inline]
fn small_int(n: RawNum<'_>) -> Option<i128> {
    let (neg, digits) = match n.text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, n.text),
    };
    if !n.is_int || digits.len() > 18 {
        return None;
    }
    let v = digits
        .iter()
        .fold(0i64, |v, &d| v * 10 + i64::from(d - b'0'));
    Some(i128::from(if neg { -v } else { v }))
}

/// A string field; a value of another type reads as its JSON text.
fn string<'a>(r: &mut Reader<'a>) -> ReadResult<Cow<'a, str>> {
    Ok(match id(r)? {
        Id::Text(t) => t,
        Id::Int(i) => Cow::Owned(i.to_string()),
    })
}

fn number<'a>(r: &mut Reader<'a>) -> ReadResult<Option<RawNum<'a>>> {
    match r.peek()? {
        b'-' | b'0'..=b'9' | b'N' | b'I' => {
            if matches!(r.peek()?, b'N' | b'I') {
                let start = r.pos;
                r.skip_value()?;
                return Ok(Some(RawNum {
                    text: &r.b[start..r.pos],
                    is_int: false,
                }));
            }
            r.number().map(Some)
        }
        _ => {
            r.skip_value()?;
            Ok(None)
        }
    }
}

fn boolean(r: &mut Reader<'_>) -> ReadResult<bool> {
    let first = r.peek()?;
    r.skip_value()?;
    Ok(first == b't')
}

/// Reads the event object that `bytes` holds whole; `None` when it is not
/// an object.
#[cfg(test)]
pub(super) fn read_event(bytes: &[u8]) -> ReadResult<Option<TraceEvent<'_>>> {
    read_event_at(&mut Reader::new(bytes))
}

/// Reads one element of `traceEvents` at the reader's cursor (and past it):
/// the event, or `None` (skipped) when it is not an object. Pure: on
/// [`crate::json::read::ReadError::Incomplete`] the caller reads again with
/// more bytes.
pub(super) fn read_event_at<'a>(r: &mut Reader<'a>) -> ReadResult<Option<TraceEvent<'a>>> {
    if r.peek()? != b'{' {
        r.skip_value()?;
        return Ok(None);
    }
    r.pos += 1;
    let mut e = TraceEvent::new(Phase::Other(Cow::Borrowed("")));
    let (mut ph, mut ts, mut dur) = (None, None, None);
    if !r.empty_close(b'}')? {
        loop {
            let key = r.key()?;
            // Keys compare as bytes: only an escaped one is decoded first.
            let decoded;
            let k: &[u8] = if key.escaped {
                decoded = key.decode();
                decoded.as_bytes()
            } else {
                key.raw
            };
            match k {
                b"ph" => ph = Some(string(r)?),
                b"name" => e.name = string(r)?,
                b"cat" => e.cat = string(r)?,
                b"pid" => e.pid = Some(id(r)?),
                b"tid" => e.tid = Some(id(r)?),
                b"ts" => ts = number(r)?,
                b"dur" => dur = number(r)?,
                b"id" => e.id = Some(id(r)?),
                b"bp" => e.binds_enclosing = string(r)? == "e",
                b"s" => {
                    e.scope = match &*string(r)? {
                        "g" => Scope::Global,
                        "p" => Scope::Process,
                        _ => Scope::Thread,
                    }
                }
                b"bind_id" => e.bind_id = Some(id(r)?),
                b"flow_in" => e.flow_in = boolean(r)?,
                b"flow_out" => e.flow_out = boolean(r)?,
                b"args" => {
                    r.skip_ws();
                    let start = r.pos;
                    r.skip_value()?;
                    e.args = Args::Json(&r.b[start..r.pos]);
                }
                _ => r.skip_value()?,
            }
            if !r.comma_or(b'}')? {
                break;
            }
        }
    }
    e.ph = Phase::parse(ph);
    e.ts = ts.map(|n: RawNum<'_>| n.as_f64());
    e.dur = dur.map(|n: RawNum<'_>| n.as_f64());
    Ok(Some(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_of_an_event_are_read_in_any_order() {
        let text = br#"{"args":{"a":[1,{"b":null}]},"ph":"X","name":"k\u00e9","pid":0,
            "tid":"PyTorch Profiler","ts":12.5,"dur":3,"x":[1,2],"cat":"kernel"} "#;
        let e = read_event(text).unwrap().unwrap();
        assert_eq!(e.ph, Phase::Complete);
        assert_eq!(e.name, "k\u{e9}");
        assert_eq!(e.cat, "kernel");
        assert_eq!(e.pid, Some(Id::Int(0)));
        assert_eq!(e.tid, Some(Id::Text("PyTorch Profiler".into())));
        assert_eq!(e.ts, Some(12.5));
        assert_eq!(e.dur, Some(3.0));
        assert!(matches!(e.args, Args::Json(t) if t == br#"{"a":[1,{"b":null}]}"#));
    }

    #[test]
    fn odd_values_read_as_their_text() {
        let e = read_event(br#"{"pid":1.5,"tid":null,"ts":"1","name":7} "#)
            .unwrap()
            .unwrap();
        assert_eq!(e.pid, Some(Id::Text("1.5".into())));
        assert_eq!(e.tid, Some(Id::Text("null".into())));
        assert!(e.ts.is_none());
        assert_eq!(e.name, "7");
        assert!(read_event(b"[1] ").unwrap().is_none());
    }
}
