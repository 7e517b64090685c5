//! The `args` of a GPU event, in PyTorch's merge's key order, with its rules for
//! annotations (a JSON dict spreads into args, a list becomes its
//! `json.dumps` text, anything else is kept as `annotation`).

use super::window_input::{GpuDetail, GpuEvent};
use crate::json::dict::DictSlots;
use crate::json::read::parse_document;
use crate::json::value::Value;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ArgValue {
    Int(i128),
    Str(String),
    Json(Value),
}

/// Ordered args with Python dict assignment: a key set twice keeps its place.
#[derive(Debug, Default)]
pub(crate) struct Args(Vec<(String, ArgValue)>, DictSlots);

impl Args {
    fn set(&mut self, key: &str, value: ArgValue) {
        match self.1.find(&self.0, |(k, _)| k, key) {
            Some(i) => self.0[i].1 = value,
            None => {
                self.0.push((key.to_owned(), value));
                self.1.pushed(&self.0, |(k, _)| k);
            }
        }
    }
}

impl<'a> IntoIterator for &'a Args {
    type Item = &'a (String, ArgValue);
    type IntoIter = std::slice::Iter<'a, (String, ArgValue)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// PyTorch's merge names every copy kind but `HtoH` (9), which it writes as a number.
fn memcpy_kind_name(kind: i128) -> Option<&'static str> {
    u64::try_from(kind)
        .ok()
        .filter(|&k| k != 9)
        .and_then(cupmon_records::copy_kind_word)
}

fn memory_kind_name(kind: i128) -> Option<&'static str> {
    u64::try_from(kind)
        .ok()
        .and_then(cupmon_records::memory_kind_word)
}

fn named(name: Option<&'static str>, fallback: i128) -> ArgValue {
    name.map_or(ArgValue::Int(fallback), |n| ArgValue::Str(n.to_owned()))
}

/// The args of a kernel, memcpy or memset event.
pub(crate) fn gpu_args(g: &GpuEvent) -> Args {
    let mut args = Args(Vec::with_capacity(8), DictSlots::default());
    args.set("device", ArgValue::Int(g.device_id));
    args.set("context", ArgValue::Int(g.context_id));
    args.set("stream", ArgValue::Int(g.stream_id));
    args.set("correlation", ArgValue::Int(g.correlation_id));
    if g.graph_id != 0 {
        args.set("graph id", ArgValue::Int(g.graph_id));
    }
    if g.graph_node_id != 0 {
        args.set("graph node id", ArgValue::Int(g.graph_node_id));
    }
    if let Some(annotation) = &g.annotation {
        annotation_to_args(&mut args, annotation);
    }
    match g.detail {
        GpuDetail::Kernel => {}
        GpuDetail::Memcpy {
            bytes,
            copy_kind,
            src_kind,
            dst_kind,
            flags,
        } => {
            args.set("bytes", ArgValue::Int(bytes));
            args.set("copy kind", named(memcpy_kind_name(copy_kind), copy_kind));
            args.set("src kind", named(memory_kind_name(src_kind), src_kind));
            args.set("dst kind", named(memory_kind_name(dst_kind), dst_kind));
            args.set("flags", ArgValue::Int(flags));
        }
        GpuDetail::Memset {
            bytes,
            value,
            memory_kind,
            flags,
        } => {
            args.set("bytes", ArgValue::Int(bytes));
            args.set("value", ArgValue::Int(value));
            args.set("memory kind", ArgValue::Int(memory_kind));
            args.set("flags", ArgValue::Int(flags));
        }
    }
    args
}

/// `_annotation_to_args` (the caller has already skipped `None`).
fn annotation_to_args(args: &mut Args, annotation: &Value) {
    let decoded = match annotation {
        Value::Str(text) => match parse_python_json(text) {
            Some(v) => v,
            None => {
                args.set("annotation", ArgValue::Str(text.clone()));
                return;
            }
        },
        other => other.clone(),
    };
    match decoded {
        Value::Array(_) => args.set("annotation", ArgValue::Str(decoded.py_json_dumps())),
        Value::Object(members) => {
            for (k, v) in members {
                args.set(&k, ArgValue::Json(v));
            }
        }
        other => args.set("annotation", ArgValue::Json(other)),
    }
}

/// `json.loads(text)`, or None where it raises JSONDecodeError.
fn parse_python_json(text: &str) -> Option<Value> {
    parse_document(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args_for(annotation: Value) -> Vec<(String, ArgValue)> {
        let mut args = Args::default();
        args.set("device", ArgValue::Int(0));
        annotation_to_args(&mut args, &annotation);
        args.0
    }

    #[test]
    fn dict_annotations_spread_and_overwrite_in_place() {
        let got = args_for(Value::Str(r#"{"step": 3, "device": "x"}"#.into()));
        assert_eq!(
            got,
            vec![
                ("device".into(), ArgValue::Json(Value::Str("x".into()))),
                ("step".into(), ArgValue::Json(Value::Int(3))),
            ]
        );
    }

    #[test]
    fn list_annotations_become_python_json_text() {
        let got = args_for(Value::Str("[1,\"a\", 2.50]".into()));
        assert_eq!(
            got[1],
            ("annotation".into(), ArgValue::Str("[1, \"a\", 2.5]".into()))
        );
    }

    #[test]
    fn invalid_json_and_scalars_are_kept() {
        assert_eq!(
            args_for(Value::Str("not json".into()))[1],
            ("annotation".into(), ArgValue::Str("not json".into()))
        );
        assert_eq!(
            args_for(Value::Str("null".into()))[1],
            ("annotation".into(), ArgValue::Json(Value::Null))
        );
        assert_eq!(
            args_for(Value::Int(5))[1],
            ("annotation".into(), ArgValue::Json(Value::Int(5)))
        );
    }
}
