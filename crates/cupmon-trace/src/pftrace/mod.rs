//! The Perfetto sink of the typed event stream ([`crate::event`]): the events a
//! merge, an export or a combine writes become a `.pftrace` (Perfetto
//! `TracePacket`s) with the same processes, threads, slices, instants, counters,
//! flows and args as the Chrome JSON sink writes. The writers' own events come
//! typed; an input trace's events (a CPU trace's, a rank's) come as their JSON
//! text and are read into the same typed events. A stream: the sink holds one
//! event at a time (plus the writer's bounded reorder windows and interning
//! tables), never the trace.

mod args;
mod convert;
mod event;
mod tracks;

use std::collections::BTreeMap;
use std::io::{self, Write};

use cupmon_pftrace::{PftraceWriter, WriterOptions};

use crate::event::{EventSink, TraceEvent};
use crate::json::read::{ReadError, Reader};
use convert::Converter;

/// What a Perfetto trace holds, and what of the JSON trace it could not hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PftraceStats {
    pub bytes: u64,
    pub slices: u64,
    pub instants: u64,
    pub counter_values: u64,
    pub metadata_events: u64,
    /// Flow events (`s`, `t`, `f`) attached to a slice, and those that found
    /// no slice enclosing them (Perfetto's JSON importer drops those too).
    pub flow_events_bound: u64,
    pub flow_events_unbound: u64,
    /// Slices on overlap tracks opened by the writer: they overlapped an
    /// earlier slice of their track without nesting in it (cupmon's own
    /// overlap tracks, `stream N (overlap)`, are tracks of the JSON already).
    pub overlap_tracks: u64,
    pub overlap_slices: u64,
    /// Slices past the overlap-track limit, drawn on the last one.
    pub forced_slices: u64,
    /// Events not converted, by reason ("phase \"b\"": async events, ...).
    pub skipped: BTreeMap<String, u64>,
}

impl PftraceStats {
    fn skip(&mut self, why: &str) {
        *self.skipped.entry(why.to_owned()).or_insert(0) += 1;
    }

    /// Problems worth a warning: events not converted, flows not drawn,
    /// slices drawn mis-nested.
    pub fn warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .skipped
            .iter()
            .map(|(why, n)| format!("{n} events not converted ({why})"))
            .collect();
        if self.flow_events_unbound > 0 {
            out.push(format!(
                "{} flow events enclose no slice of their thread and are not drawn",
                self.flow_events_unbound
            ));
        }
        if self.forced_slices > 0 {
            out.push(format!(
                "{} slices overlap more than the overlap tracks allow and may be drawn mis-nested",
                self.forced_slices
            ));
        }
        out
    }
}

/// The Perfetto sink: see the module docs. `base_ns` is the trace's
/// `baseTimeNanoseconds` (Perfetto's times are absolute).
#[derive(Debug)]
pub(crate) struct PerfettoEvents<W: Write> {
    conv: Converter<W>,
    /// An input's event text not read yet (an event cut between two writes).
    input: Vec<u8>,
    /// Whether the next input item is an event (else a comma).
    input_event_next: bool,
    written: u64,
    /// Elements of `traceEvents` converted so far (for messages).
    events: u64,
}

impl<W: Write> PerfettoEvents<W> {
    pub fn new(out: W, base_ns: i128) -> io::Result<Self> {
        Self::with_options(out, base_ns, WriterOptions::default())
    }

    pub fn with_options(out: W, base_ns: i128, opts: WriterOptions) -> io::Result<Self> {
        let w = PftraceWriter::with_options(out, opts).map_err(io::Error::other)?;
        Ok(Self {
            conv: Converter::new(w, base_ns),
            input: Vec::new(),
            input_event_next: true,
            written: 0,
            events: 0,
        })
    }

    fn fail(&self, msg: impl std::fmt::Display) -> io::Error {
        io::Error::other(format!(
            "converting to a Perfetto trace: traceEvents[{}]: {msg}",
            self.events
        ))
    }

    /// A top-level member of the trace other than `traceEvents` (its key, and
    /// its value's JSON text): the metadata bundle's.
    pub fn member(&mut self, key: &str, raw: &[u8]) -> io::Result<()> {
        self.conv
            .member(key.to_owned(), raw.trim_ascii_start())
            .map_err(|msg| io::Error::other(format!("converting to a Perfetto trace: {msg}")))
    }

    /// Reads the input's complete events in `input`.
    fn read_input(&mut self) -> io::Result<()> {
        let mut pos = 0;
        let result = loop {
            let mut r = Reader::at(&self.input, pos);
            if self.input_event_next {
                match event::read_event_at(&mut r) {
                    Ok(e) => {
                        let end = r.pos;
                        self.events += 1;
                        let converted = match &e {
                            Some(e) => self.conv.event(e),
                            None => {
                                self.conv.stats.skip("not a JSON object");
                                Ok(())
                            }
                        };
                        if let Err(err) = converted {
                            break Err(self.fail(err));
                        }
                        pos = end;
                        self.input_event_next = false;
                    }
                    Err(ReadError::Incomplete) => break Ok(()),
                    Err(err) => break Err(self.fail(format!("{err:?}"))),
                }
            } else {
                r.skip_ws();
                match r.b.get(r.pos) {
                    None => break Ok(()),
                    Some(b',') => {
                        pos = r.pos + 1;
                        self.input_event_next = true;
                    }
                    Some(_) => break Err(self.fail("a ',' was expected between two events")),
                }
            }
        };
        self.input.drain(..pos);
        result
    }

    /// What the trace holds; the sink's output.
    pub fn finish(self) -> io::Result<(W, PftraceStats)> {
        self.conv.finish().map_err(io::Error::other)
    }
}

impl<W: Write> EventSink for PerfettoEvents<W> {
    fn event(&mut self, e: &TraceEvent<'_>) -> io::Result<()> {
        self.written += 1 + u64::from(e.flow.is_some());
        self.events += 1;
        let result = self.conv.event(e);
        result.map_err(|err| self.fail(err))
    }

    fn input_events(
        &mut self,
        copy: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        self.input.clear();
        self.input_event_next = true;
        copy(&mut InputText(self))?;
        // A run ends with an event: only whitespace may be left.
        if self.input.iter().any(|c| !c.is_ascii_whitespace()) || self.input_event_next {
            return Err(self.fail("an input's events ended inside an event"));
        }
        Ok(())
    }

    fn written(&self) -> u64 {
        self.written
    }
}

/// The input's event text as it is copied.
struct InputText<'s, W: Write>(&'s mut PerfettoEvents<W>);

impl<W: Write> Write for InputText<'_, W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_all(data)?;
        Ok(data.len())
    }

    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        self.0.input.extend_from_slice(data);
        self.0.read_input()
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::chrome_events::ChromeEvents;
    use crate::event::{ArgValue, FlowEnd, Id, Phase, Scope};

    const EVENTS: &str = r#"
        {"ph":"M","name":"thread_name","pid":10,"tid":11,"args":{"name":"main"}},
        {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":10,"tid":11,
         "ts":1.5,"dur":2.25,"args":{"cbid":211,"correlation":7,"dims":[[1,2],[]],"x":null}},
        {"ph":"s","id":7,"pid":10,"tid":11,"ts":1.5,"cat":"ac2g","name":"ac2g"},
        {"ph":"X","cat":"kernel","name":"k\u00e9","pid":0,"tid":7,"ts":10.001,"dur":5,
         "args":{"stream":7,"big":18446744073709551616,"ratio":0.5}},
        {"ph":"f","id":7,"pid":0,"tid":7,"ts":10.001,"cat":"ac2g","name":"ac2g","bp":"e"},
        {"ph":"i","s":"g","name":"Record Window End","pid":"","tid":"","ts":20},
        {"ph":"C","name":"mem","pid":0,"tid":0,"ts":3,"args":{"bytes":1024}},
        {"ph":"b","name":"async","pid":0,"tid":0,"ts":3,"id":1}
      "#;

    fn sink(base_ns: i128) -> PerfettoEvents<Vec<u8>> {
        let opts = WriterOptions {
            realtime_now_ns: Some(1),
            ..WriterOptions::default()
        };
        PerfettoEvents::with_options(Vec::new(), base_ns, opts).unwrap()
    }

    /// `text` as an input's events, written in pieces of `chunks` bytes.
    fn input(s: &mut PerfettoEvents<Vec<u8>>, text: &str, chunks: &[usize]) -> io::Result<()> {
        s.input_events(&mut |out| {
            let mut rest = text.as_bytes();
            let mut sizes = chunks.iter().cycle();
            while !rest.is_empty() {
                let n = (*sizes.next().unwrap_or(&1)).min(rest.len()).max(1);
                out.write_all(&rest[..n])?;
                rest = &rest[n..];
            }
            Ok(())
        })
    }

    fn convert(chunks: &[usize]) -> io::Result<(Vec<u8>, PftraceStats)> {
        let mut s = sink(1_000_000_000);
        s.member("schemaVersion", b"1")?;
        input(&mut s, EVENTS, chunks)?;
        s.member("baseTimeNanoseconds", b"1000000000")?;
        s.finish()
    }

    #[test]
    fn an_inputs_events_come_out_the_same_however_their_text_is_cut() {
        let (whole, stats) = convert(&[EVENTS.len()]).unwrap();
        for chunks in [&[1][..], &[2, 3, 5, 7], &[64], &[1000, 1]] {
            assert_eq!(convert(chunks).unwrap().0, whole, "chunks {chunks:?}");
        }
        assert_eq!(
            (
                stats.slices,
                stats.instants,
                stats.counter_values,
                stats.metadata_events
            ),
            (2, 1, 1, 1)
        );
        assert_eq!((stats.flow_events_bound, stats.flow_events_unbound), (2, 0));
        assert_eq!(stats.skipped.get("phase \"b\""), Some(&1));
        assert_eq!(
            stats.warnings(),
            vec!["1 events not converted (phase \"b\")"]
        );
    }

    #[test]
    fn an_inputs_events_cut_inside_one_are_an_error() {
        let mut s = sink(1_000_000_000);
        let err = input(&mut s, &EVENTS[..200], &[64])
            .unwrap_err()
            .to_string();
        assert!(err.contains("ended inside an event"), "{err}");
        let mut s = sink(1_000_000_000);
        let err = input(&mut s, r#"{"ph":"X"} {"ph":"X"}"#, &[5]).unwrap_err();
        assert!(err.to_string().contains("a ',' was expected"), "{err}");
    }

    #[test]
    fn a_slice_out_of_time_order_keeps_the_flow_that_follows_it() {
        // As in a merge: a thread's CPU ops first, then the window's runtime
        // calls on the same thread, earlier in time than the last op.
        let mut text = String::new();
        for i in 0..1000 {
            text.push_str(&format!(
                r#"{{"ph":"X","name":"op","pid":1,"tid":2,"ts":{},"dur":1}},"#,
                100 + 2 * i
            ));
        }
        text.push_str(concat!(
            r#"{"ph":"X","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":10,"dur":1},"#,
            r#"{"ph":"s","id":9,"pid":1,"tid":2,"ts":10,"cat":"ac2g","name":"ac2g"},"#,
            r#"{"ph":"X","name":"k","pid":0,"tid":7,"ts":12,"dur":1},"#,
            r#"{"ph":"f","id":9,"pid":0,"tid":7,"ts":12,"cat":"ac2g","name":"ac2g","bp":"e"}"#
        ));
        let mut s = sink(0);
        input(&mut s, &text, &[4096]).unwrap();
        let (_, stats) = s.finish().unwrap();
        assert_eq!((stats.flow_events_bound, stats.flow_events_unbound), (2, 0));
        assert_eq!(stats.slices, 1002);
    }

    #[test]
    fn a_base_time_other_than_the_events_is_refused() {
        let mut s = sink(5);
        let err = s.member("baseTimeNanoseconds", b" 1000000000").unwrap_err();
        assert!(
            err.to_string()
                .contains("baseTimeNanoseconds is 1000000000"),
            "{err}"
        );
    }

    /// Typed events of every kind the writers give, nested inside one another
    /// and out of time order as a merge's are.
    fn typed_events(value: &crate::json::value::Value) -> Vec<TraceEvent<'_>> {
        let int = |i| Some(Id::Int(i));
        let text = |t: &'static str| Some(Id::Text(Cow::Borrowed(t)));
        let launch_args: &'static [(&str, ArgValue<'static>)] = &[
            ("cbid", ArgValue::Int(211)),
            ("correlation", ArgValue::Int(7)),
        ];
        let mut events = vec![TraceEvent {
            name: "thread_name".into(),
            pid: int(10),
            tid: int(11),
            ts: Some(0.0),
            ..TraceEvent::new(Phase::Metadata)
        }
        .with_args(&[("name", ArgValue::Str("thread 11"))])];
        for (i, ts) in [5.5, 1.25, 3.0].into_iter().enumerate() {
            let corr = 7 + i as i128;
            let mut launch = TraceEvent::slice(
                "cuda_runtime",
                "cudaLaunchKernel",
                Id::Int(10),
                Id::Int(11),
                ts,
                2.0,
            )
            .with_args(launch_args);
            launch.flow = Some((corr, FlowEnd::Start));
            events.push(launch);
        }
        events.push(
            TraceEvent::slice(
                "cuda_runtime",
                "cudaMalloc",
                Id::Int(10),
                Id::Int(11),
                1.5,
                0.5,
            )
            .with_args(&[]),
        );
        let mut kernel =
            TraceEvent::slice("kernel", "k\u{e9}\"", Id::Int(0), Id::Int(7), 10.001, 5.0);
        kernel.args = crate::event::Args::Fields(Box::leak(Box::new([
            ("grid", ArgValue::Dims([1, 2, 3])),
            ("blocks per SM", ArgValue::Json("0.5")),
            ("big", ArgValue::Int(1 << 70)),
            ("neg", ArgValue::Int(-3)),
            ("ratio", ArgValue::Float(1e16)),
            ("list", ArgValue::Value(value)),
        ])));
        kernel.flow = Some((7, FlowEnd::Finish));
        events.push(kernel);
        events.push(
            TraceEvent {
                name: "mem".into(),
                pid: int(0),
                tid: int(0),
                ts: Some(3.0),
                ..TraceEvent::new(Phase::Counter)
            }
            .with_args(&[("bytes", ArgValue::Float(1024.0))]),
        );
        events.push(TraceEvent {
            name: "Record Window End".into(),
            pid: text(""),
            tid: text(""),
            ts: Some(20.0),
            scope: Scope::Global,
            ..TraceEvent::new(Phase::Instant)
        });
        events
    }

    #[test]
    fn typed_events_and_their_chrome_json_make_the_same_perfetto_trace() {
        let value =
            crate::json::read::parse_document(br#"[1, 2.5, "x", {"a": null}, true]"#).unwrap();
        let events = typed_events(&value);
        let mut typed = sink(1_000_000_000);
        let mut json = ChromeEvents::new(Vec::new());
        for e in &events {
            typed.event(e).unwrap();
            json.event(e).unwrap();
        }
        assert_eq!(typed.written(), json.written());
        let text = String::from_utf8(json.finish().unwrap()).unwrap();
        let mut from_text = sink(1_000_000_000);
        input(&mut from_text, &text, &[100]).unwrap();
        let (a, typed_stats) = typed.finish().unwrap();
        let (b, text_stats) = from_text.finish().unwrap();
        assert_eq!(typed_stats, text_stats);
        assert_eq!(typed_stats.flow_events_bound, 4);
        assert_eq!(typed_stats.slices, 5);
        assert!(a == b, "the two Perfetto traces differ");
    }
}
