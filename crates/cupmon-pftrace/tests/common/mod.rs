//! A small reader of `.pftrace` files for the tests: decodes with
//! prost-reflect against Perfetto's vendored `perfetto_trace.proto` (so it
//! does not share the writer's field numbers), resolves interned strings the
//! way Perfetto does (per sequence, defined in an earlier or the same
//! packet), and pairs slice BEGIN/END the way trace processor does: events
//! sorted by timestamp, ties in file order, an END closes its track's
//! innermost open slice.

#![allow(dead_code)]

use std::collections::HashMap;

use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, Value};

pub fn pool() -> DescriptorPool {
    // Through crates/ so that cupmon-trace's tests can use this file too.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../cupmon-pftrace/proto");
    let mut c = protox::Compiler::new([dir]).expect("proto dir");
    c.open_file("perfetto_trace.proto")
        .expect("vendored perfetto_trace.proto compiles");
    c.descriptor_pool()
}

fn message(pool: &DescriptorPool, name: &str) -> MessageDescriptor {
    pool.get_message_by_name(&format!("perfetto.protos.{name}"))
        .expect(name)
}

/// The packets of a trace, decoded.
pub fn decode(bytes: &[u8]) -> Vec<DynamicMessage> {
    let pool = pool();
    let trace = DynamicMessage::decode(message(&pool, "Trace"), bytes).expect("a Trace");
    list(&trace, "packet")
        .into_iter()
        .map(|v| v.as_message().unwrap().clone())
        .collect()
}

pub fn has(m: &DynamicMessage, field: &str) -> bool {
    m.has_field_by_name(field)
}

pub fn get(m: &DynamicMessage, field: &str) -> Value {
    m.get_field_by_name(field)
        .unwrap_or_else(|| panic!("no field {field}"))
        .into_owned()
}

pub fn msg(m: &DynamicMessage, field: &str) -> DynamicMessage {
    get(m, field).as_message().unwrap().clone()
}

pub fn list(m: &DynamicMessage, field: &str) -> Vec<Value> {
    get(m, field).as_list().unwrap().to_vec()
}

pub fn u64_of(m: &DynamicMessage, field: &str) -> u64 {
    match get(m, field) {
        Value::U64(v) => v,
        Value::U32(v) => v.into(),
        Value::I64(v) => v as u64,
        Value::I32(v) => v as u64,
        Value::EnumNumber(v) => v as u64,
        other => panic!("{field}: {other:?}"),
    }
}

pub fn str_of(m: &DynamicMessage, field: &str) -> String {
    get(m, field).as_str().unwrap().to_owned()
}

/// A decoded argument value.
#[derive(Debug, Clone, PartialEq)]
pub enum A {
    Int(i64),
    Uint(u64),
    Double(f64),
    Bool(bool),
    Str(String),
    Dict(Vec<(String, A)>),
    Array(Vec<A>),
    /// `legacy_json_value`: JSON text trace processor parses.
    Json(String),
}

#[derive(Debug, Clone, Default)]
pub struct Track {
    pub name: Option<String>,
    pub parent: Option<u64>,
    pub pid: Option<i64>,
    pub tid: Option<i64>,
    pub process_name: Option<String>,
    pub thread_name: Option<String>,
    pub labels: Vec<String>,
    pub rank: Option<i64>,
    pub legacy_sort_index: Option<i64>,
    pub counter_unit: Option<u64>,
    pub counter_unit_name: Option<String>,
    pub merge_behavior: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct Event {
    pub file_index: usize,
    pub ts: u64,
    pub ty: u64,
    pub track: u64,
    pub name: Option<String>,
    pub category: Option<String>,
    pub args: Vec<(String, A)>,
    pub flows: Vec<u64>,
    pub terminating_flows: Vec<u64>,
    pub counter: Option<Value>,
}

#[derive(Debug, Default)]
pub struct Model {
    pub tracks: HashMap<u64, Track>,
    /// Track descriptors that repeated an earlier uuid.
    pub redescribed: usize,
    /// `ChromeEventBundle.metadata`, in order, and how many bundles.
    pub metadata: Vec<(String, A)>,
    pub bundles: usize,
    pub events: Vec<Event>,
    pub packets: usize,
}

#[derive(Default)]
struct Interned {
    tables: HashMap<&'static str, HashMap<u64, String>>,
}

impl Interned {
    fn get(&self, table: &'static str, iid: u64) -> String {
        self.tables
            .get(table)
            .and_then(|t| t.get(&iid))
            .unwrap_or_else(|| panic!("{table} iid {iid} used before it was defined"))
            .clone()
    }
}

fn annotation(d: &DynamicMessage, interned: &Interned) -> (Option<String>, A) {
    let name = if has(d, "name_iid") {
        Some(interned.get("debug_annotation_names", u64_of(d, "name_iid")))
    } else if has(d, "name") {
        Some(str_of(d, "name"))
    } else {
        None
    };
    let value = if has(d, "int_value") {
        A::Int(get(d, "int_value").as_i64().unwrap())
    } else if has(d, "uint_value") {
        A::Uint(u64_of(d, "uint_value"))
    } else if has(d, "double_value") {
        A::Double(get(d, "double_value").as_f64().unwrap())
    } else if has(d, "bool_value") {
        A::Bool(get(d, "bool_value").as_bool().unwrap())
    } else if has(d, "string_value") {
        A::Str(str_of(d, "string_value"))
    } else if has(d, "string_value_iid") {
        A::Str(interned.get(
            "debug_annotation_string_values",
            u64_of(d, "string_value_iid"),
        ))
    } else if has(d, "legacy_json_value") {
        A::Json(str_of(d, "legacy_json_value"))
    } else if has(d, "dict_entries") {
        A::Dict(
            list(d, "dict_entries")
                .iter()
                .map(|e| {
                    let (n, v) = annotation(e.as_message().unwrap(), interned);
                    (n.expect("dict entry has a name"), v)
                })
                .collect(),
        )
    } else if has(d, "array_values") {
        A::Array(
            list(d, "array_values")
                .iter()
                .map(|e| annotation(e.as_message().unwrap(), interned).1)
                .collect(),
        )
    } else {
        // An empty dict or array has no entries on the wire.
        A::Dict(Vec::new())
    };
    (name, value)
}

/// Reads the packets into tracks and events, checking the sequence rules.
pub fn model(packets: &[DynamicMessage]) -> Model {
    let mut m = Model {
        packets: packets.len(),
        ..Model::default()
    };
    let mut interned = Interned::default();
    let mut cleared = false;
    for (i, p) in packets.iter().enumerate() {
        let flags = if has(p, "sequence_flags") {
            u64_of(p, "sequence_flags")
        } else {
            0
        };
        if flags & 1 != 0 {
            cleared = true;
            interned = Interned::default();
        }
        if flags & 2 != 0 {
            assert!(
                cleared,
                "packet {i} needs incremental state before any packet cleared it"
            );
        }
        if has(p, "interned_data") {
            assert!(
                flags & 2 != 0,
                "packet {i} has interned data without SEQ_NEEDS_INCREMENTAL_STATE"
            );
            let d = msg(p, "interned_data");
            for (table, text) in [
                ("event_names", "name"),
                ("event_categories", "name"),
                ("debug_annotation_names", "name"),
                ("debug_annotation_string_values", "str"),
            ] {
                for e in list(&d, table) {
                    let e = e.as_message().unwrap();
                    let text = match get(e, text) {
                        Value::String(s) => s,
                        Value::Bytes(b) => String::from_utf8(b.to_vec()).unwrap(),
                        other => panic!("{other:?}"),
                    };
                    let old = interned
                        .tables
                        .entry(table)
                        .or_default()
                        .insert(u64_of(e, "iid"), text);
                    assert!(old.is_none(), "{table} iid defined twice");
                }
            }
        }
        if has(p, "chrome_events") {
            m.bundles += 1;
            for e in list(&msg(p, "chrome_events"), "metadata") {
                let e = e.as_message().unwrap();
                let value = if has(e, "string_value") {
                    A::Str(str_of(e, "string_value"))
                } else if has(e, "int_value") {
                    A::Int(get(e, "int_value").as_i64().unwrap())
                } else if has(e, "bool_value") {
                    A::Bool(get(e, "bool_value").as_bool().unwrap())
                } else {
                    A::Json(str_of(e, "json_value"))
                };
                m.metadata.push((str_of(e, "name"), value));
            }
        }
        if has(p, "track_descriptor") {
            let d = msg(p, "track_descriptor");
            let mut t = Track::default();
            let opt = |m: &DynamicMessage, f: &str| has(m, f).then(|| u64_of(m, f) as i64);
            t.name = has(&d, "name").then(|| str_of(&d, "name"));
            t.parent = opt(&d, "parent_uuid").map(|v| v as u64);
            t.rank = opt(&d, "sibling_order_rank").map(|v| v as i32 as i64);
            t.merge_behavior = opt(&d, "sibling_merge_behavior").map(|v| v as u64);
            if has(&d, "process") {
                let pd = msg(&d, "process");
                t.pid = opt(&pd, "pid").map(|v| v as i32 as i64);
                t.process_name = has(&pd, "process_name").then(|| str_of(&pd, "process_name"));
                t.labels = list(&pd, "process_labels")
                    .iter()
                    .map(|v| v.as_str().unwrap().to_owned())
                    .collect();
                t.legacy_sort_index = opt(&pd, "legacy_sort_index").map(|v| v as i32 as i64);
            }
            if has(&d, "thread") {
                let td = msg(&d, "thread");
                t.pid = opt(&td, "pid").map(|v| v as i32 as i64);
                t.tid = opt(&td, "tid");
                t.thread_name = has(&td, "thread_name").then(|| str_of(&td, "thread_name"));
                t.legacy_sort_index = opt(&td, "legacy_sort_index").map(|v| v as i32 as i64);
            }
            if has(&d, "counter") {
                let cd = msg(&d, "counter");
                t.counter_unit = Some(if has(&cd, "unit") {
                    u64_of(&cd, "unit")
                } else {
                    0
                });
                t.counter_unit_name = has(&cd, "unit_name").then(|| str_of(&cd, "unit_name"));
            }
            let uuid = if has(&d, "uuid") {
                u64_of(&d, "uuid")
            } else {
                0
            };
            // Described again (a name that came later): the last one counts,
            // as in trace processor; it must stay the same kind of track.
            if let Some(old) = m.tracks.insert(uuid, t.clone()) {
                assert_eq!(
                    (old.pid, old.tid, old.parent),
                    (t.pid, t.tid, t.parent),
                    "track {uuid} described again as another track"
                );
                m.redescribed += 1;
            }
        }
        if has(p, "track_event") {
            assert!(
                flags & 2 != 0,
                "packet {i}: a TrackEvent relies on the sequence's defaults"
            );
            assert!(
                !has(p, "timestamp_clock_id"),
                "packet {i} overrides the clock"
            );
            let e = msg(p, "track_event");
            let name = if has(&e, "name_iid") {
                Some(interned.get("event_names", u64_of(&e, "name_iid")))
            } else {
                has(&e, "name").then(|| str_of(&e, "name"))
            };
            let cats: Vec<String> = list(&e, "category_iids")
                .iter()
                .map(|v| interned.get("event_categories", v.as_u64().unwrap()))
                .chain(
                    list(&e, "categories")
                        .iter()
                        .map(|v| v.as_str().unwrap().to_owned()),
                )
                .collect();
            assert!(cats.len() <= 1);
            let track = u64_of(&e, "track_uuid");
            assert!(
                m.tracks.contains_key(&track),
                "packet {i}: event on undeclared track {track}"
            );
            let counter = if has(&e, "counter_value") {
                Some(get(&e, "counter_value"))
            } else if has(&e, "double_counter_value") {
                Some(get(&e, "double_counter_value"))
            } else {
                None
            };
            m.events.push(Event {
                file_index: i,
                ts: u64_of(p, "timestamp"),
                ty: u64_of(&e, "type"),
                track,
                name,
                category: cats.into_iter().next(),
                args: list(&e, "debug_annotations")
                    .iter()
                    .map(|d| {
                        let (n, v) = annotation(d.as_message().unwrap(), &interned);
                        (n.unwrap(), v)
                    })
                    .collect(),
                flows: list(&e, "flow_ids")
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .collect(),
                terminating_flows: list(&e, "terminating_flow_ids")
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .collect(),
                counter,
            });
        }
    }
    m
}

/// A slice as trace processor would build it.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedSlice {
    pub track: u64,
    pub start: u64,
    pub end: u64,
    pub depth: usize,
    pub name: String,
    pub category: Option<String>,
    pub args: Vec<(String, A)>,
    pub flows: Vec<u64>,
    pub terminating_flows: Vec<u64>,
}

/// Pairs BEGIN/END per track in (timestamp, file position) order.
pub fn paired_slices(m: &Model) -> Vec<PairedSlice> {
    let mut order: Vec<&Event> = m.events.iter().filter(|e| e.ty == 1 || e.ty == 2).collect();
    order.sort_by_key(|e| (e.ts, e.file_index));
    let mut open: HashMap<u64, Vec<PairedSlice>> = HashMap::new();
    let mut done = Vec::new();
    for e in order {
        let stack = open.entry(e.track).or_default();
        if e.ty == 1 {
            let depth = stack.len();
            stack.push(PairedSlice {
                track: e.track,
                start: e.ts,
                end: 0,
                depth,
                name: e.name.clone().expect("a BEGIN has a name"),
                category: e.category.clone(),
                args: e.args.clone(),
                flows: e.flows.clone(),
                terminating_flows: e.terminating_flows.clone(),
            });
        } else {
            let mut s = stack.pop().expect("an END closes an open slice");
            s.end = e.ts;
            done.push(s);
        }
    }
    assert!(open.values().all(Vec::is_empty), "slices left open");
    done.sort_by(|a, b| (a.start, a.track, &a.name).cmp(&(b.start, b.track, &b.name)));
    done
}

/// Occurrences of `needle` in `hay`.
pub fn count_bytes(hay: &[u8], needle: &[u8]) -> usize {
    memchr::memmem::find_iter(hay, needle).count()
}
