//! The events that carry no slice: `C` counters (one track per series, named
//! as Perfetto's JSON importer names them), `M` names and sort indices, and
//! the trace's top-level members as a metadata bundle.

use std::io::Write;

use cupmon_pftrace::{MetadataValue, PftraceError};

use super::{Converter, Outcome, Skip};
use crate::event::{ArgValue, Args, Id, TraceEvent};
use crate::json::read::parse_document;
use crate::json::value::Value;
use crate::pftrace::tracks::Meta;

/// An event's args as a value (few events need them so: counters, metadata).
fn args_value(args: Args<'_>) -> Option<Value> {
    match args {
        Args::None => None,
        Args::Json(text) => parse_document(text),
        Args::Fields(fields) => Some(Value::Object(
            fields
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        ArgValue::Int(i) => Value::Int(*i),
                        ArgValue::Float(f) => Value::Float(*f),
                        ArgValue::Str(s) => Value::Str((*s).to_owned()),
                        ArgValue::Value(v) => (*v).clone(),
                        ArgValue::Json(t) => parse_document(t.as_bytes())?,
                        ArgValue::Dims(d) => {
                            Value::Array(d.iter().map(|&x| Value::Int(x.into())).collect())
                        }
                    };
                    Some(((*k).to_owned(), v))
                })
                .collect::<Option<Vec<_>>>()?,
        )),
    }
}

impl<W: Write> Converter<W> {
    /// A `C` event: each numeric member of `args` is a sample of the series
    /// "NAME MEMBER" ("NAME id: ID MEMBER" with an id), as in Perfetto.
    pub(super) fn counter(&mut self, e: &TraceEvent<'_>, name: &str) -> Result<(), Outcome> {
        let ts = self.ts_ns(e.ts)?;
        let Some(Value::Object(series)) = args_value(e.args) else {
            return Err(Skip("C without args".into()).into());
        };
        let prefix = match &e.id {
            Some(Id::Int(i)) => format!("{name} id: {i}"),
            Some(Id::Text(t)) => format!("{name} id: {t}"),
            None => name.to_owned(),
        };
        for (key, value) in &series {
            let v = match value {
                Value::Str(s) => s.trim().parse::<f64>().ok(),
                other => other.py_float(),
            };
            let Some(v) = v else {
                self.stats.skip("counter value that is not a number");
                continue;
            };
            let track =
                self.tracks
                    .counter(&mut self.w, e.pid.as_ref(), &format!("{prefix} {key}"))?;
            self.w.counter(track, ts, v)?;
            self.stats.counter_values += 1;
        }
        Ok(())
    }

    pub(super) fn meta(&mut self, e: &TraceEvent<'_>, name: &str) -> Result<(), Outcome> {
        let args = match args_value(e.args) {
            Some(Value::Object(members)) => members,
            _ => Vec::new(),
        };
        let arg = |k: &str| args.iter().find(|(n, _)| n == k).map(|(_, v)| v);
        let as_text = |v: Option<&Value>| match v {
            Some(Value::Str(s)) => Some(s.clone()),
            _ => None,
        };
        let as_int = |v: Option<&Value>| v.and_then(|v| v.py_int().ok().flatten());
        let (pid, tid) = (e.pid.as_ref(), e.tid.as_ref());
        let name_arg = as_text(arg("name"));
        let label = as_text(arg("labels"));
        let meta = match name {
            "process_name" => name_arg.as_deref().map(Meta::ProcessName),
            "process_labels" => label.as_deref().map(Meta::ProcessLabel),
            "process_sort_index" => as_int(arg("sort_index")).map(Meta::ProcessSort),
            "thread_name" => name_arg.as_deref().map(Meta::ThreadName),
            "thread_sort_index" => as_int(arg("sort_index")).map(Meta::ThreadSort),
            _ => None,
        };
        match meta {
            Some(m) => {
                self.tracks.meta(&mut self.w, pid, tid, m)?;
                self.stats.metadata_events += 1;
                Ok(())
            }
            None => Err(Skip(format!("metadata event {name:?}")).into()),
        }
    }

    /// The top-level members, as one metadata bundle.
    pub(super) fn metadata_bundle(&mut self) -> Result<(), PftraceError> {
        let texts: Vec<(String, String)> = self
            .members
            .iter()
            .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
            .collect();
        let parsed: Vec<Option<Value>> = texts
            .iter()
            .map(|(_, t)| parse_document(t.as_bytes()))
            .collect();
        let entries: Vec<(&str, MetadataValue<'_>)> = texts
            .iter()
            .zip(&parsed)
            .map(|((k, text), v)| {
                let value = match v {
                    Some(Value::Str(s)) => MetadataValue::Str(s),
                    Some(Value::Bool(b)) => MetadataValue::Bool(*b),
                    Some(Value::Int(i)) => match i64::try_from(*i) {
                        Ok(i) => MetadataValue::Int(i),
                        Err(_) => MetadataValue::Json(text),
                    },
                    _ => MetadataValue::Json(text),
                };
                (k.as_str(), value)
            })
            .collect();
        if !entries.is_empty() {
            self.w.chrome_metadata(&entries)?;
        }
        Ok(())
    }
}
