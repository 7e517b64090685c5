//! The trace window read with serde_json: the same fields the merge reads,
//! each event's known fields as `serde_json::Value` (as cupmon-trace keeps
//! its own `Value`), then converted to integers and names.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::serde_scan::KeySeed;

const FIELDS: &[&str] = &[
    "kind",
    "device_id",
    "stream_id",
    "context_id",
    "correlation_id",
    "start_ns",
    "end_ns",
    "graph_id",
    "graph_node_id",
    "name",
    "annotation",
    "bytes",
    "copy_kind",
    "src_kind",
    "dst_kind",
    "flags",
    "value",
    "memory_kind",
    "cbid",
    "process_id",
    "thread_id",
    "external_kind",
    "external_id",
];

/// One window event with the merge's integer conversions applied.
#[derive(Debug, Default)]
pub struct WinEvent {
    pub kind: String,
    pub ints: [i128; 23],
    pub name: String,
}

impl WinEvent {
    pub fn get(&self, field: &str) -> i128 {
        FIELDS
            .iter()
            .position(|f| *f == field)
            .map_or(0, |i| self.ints[i])
    }
}

#[derive(Debug, Default)]
pub struct Window {
    pub events: Vec<WinEvent>,
    pub user_annotations: Vec<(String, Value)>,
}

/// `_as_int`, for the types the bench's window holds.
fn as_int(v: &Value) -> i128 {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .or_else(|| n.as_f64().map(|f| f.trunc() as i128))
            .unwrap_or(0),
        Value::String(s) => s.trim().parse().unwrap_or(0),
        Value::Bool(b) => i128::from(*b),
        _ => 0,
    }
}

pub struct WindowVisitor;

impl<'de> Visitor<'de> for WindowVisitor {
    type Value = Window;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a trace window object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Window, A::Error> {
        let mut w = Window::default();
        while let Some(key) = map.next_key_seed(KeySeed(&["events", "user_annotations"]))? {
            match key {
                0 => w.events = map.next_value_seed(EventsSeed)?,
                1 => {
                    let v: serde_json::Map<String, Value> = map.next_value()?;
                    w.user_annotations = v.into_iter().collect();
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(w)
    }
}

struct EventsSeed;

impl<'de> DeserializeSeed<'de> for EventsSeed {
    type Value = Vec<WinEvent>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<WinEvent>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for EventsSeed {
    type Value = Vec<WinEvent>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<WinEvent>, A::Error> {
        let mut events = Vec::new();
        while let Some(e) = seq.next_element_seed(EventSeed)? {
            events.push(e);
        }
        Ok(events)
    }
}

struct EventSeed;

impl<'de> DeserializeSeed<'de> for EventSeed {
    type Value = WinEvent;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<WinEvent, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EventSeed {
    type Value = WinEvent;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an event object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WinEvent, A::Error> {
        let mut fields: [Option<Value>; 23] = Default::default();
        while let Some(i) = map.next_key_seed(KeySeed(FIELDS))? {
            match fields.get_mut(i) {
                Some(slot) => *slot = Some(map.next_value()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let mut e = WinEvent::default();
        for (i, f) in fields.iter().enumerate() {
            match (i, f) {
                (_, None) => {}
                (0, Some(Value::String(k))) => e.kind = k.clone(),
                (9, Some(Value::String(n))) => e.name = n.clone(),
                (9, Some(other)) => e.name = other.to_string(),
                (_, Some(v)) => e.ints[i] = as_int(v),
            }
        }
        Ok(e)
    }
}
