//! The Perfetto protobuf side of every trace writer: the Chrome JSON trace that
//! a merge, an export or a combine writes goes through [`PftraceSink`] instead
//! of into the file, and comes out as a `.pftrace` (Perfetto `TracePacket`s)
//! with the same processes, threads, slices, instants, counters, flows and
//! args. One conversion for every writer, so the two formats cannot drift
//! apart; and a stream: the sink holds one event at a time (plus the writer's
//! bounded reorder windows and interning tables), never the trace.

mod args;
mod convert;
mod event;
mod tracks;

use std::collections::BTreeMap;
use std::io::{self, Write};

use cupmon_pftrace::{PftraceWriter, WriterOptions};

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

/// Where the reader of the JSON text is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Before the opening `{`.
    Start,
    /// Before a member's key (just after `{` or `,`).
    Key,
    /// Before the value of member `key`.
    Value(String),
    AfterMember,
    /// Before `traceEvents`' `[`.
    EventsOpen,
    /// Before an event (after `[` or `,`).
    Event,
    AfterEvent,
    /// After the closing `}`.
    End,
}

/// Takes the JSON text of a Chrome trace as it is written and writes the
/// same trace as Perfetto's protobuf to `W`. `base_ns` is the trace's
/// `baseTimeNanoseconds`: the writers know it before they write events, and
/// Kineto writes the member after them.
#[derive(Debug)]
pub struct PftraceSink<W: Write> {
    buf: Vec<u8>,
    /// Bytes of `buf` already read.
    pos: usize,
    /// Stream offset of `buf[0]`, for messages.
    offset: u64,
    state: State,
    events: u64,
    conv: Converter<W>,
    failed: Option<String>,
}

impl<W: Write> PftraceSink<W> {
    pub fn new(out: W, base_ns: i128) -> io::Result<Self> {
        Self::with_options(out, base_ns, WriterOptions::default())
    }

    pub fn with_options(out: W, base_ns: i128, opts: WriterOptions) -> io::Result<Self> {
        let w = PftraceWriter::with_options(out, opts).map_err(io::Error::other)?;
        Ok(Self {
            buf: Vec::with_capacity(1 << 20),
            pos: 0,
            offset: 0,
            state: State::Start,
            events: 0,
            conv: Converter::new(w, base_ns),
            failed: None,
        })
    }

    fn fail(&mut self, at: usize, msg: impl std::fmt::Display) -> io::Error {
        let text = format!(
            "converting to a Perfetto trace: byte {} of the JSON trace (traceEvents[{}]): {msg}",
            self.offset + at as u64,
            self.events
        );
        self.failed = Some(text.clone());
        io::Error::other(text)
    }

    /// Reads every complete item in the buffer.
    fn run(&mut self) -> io::Result<()> {
        loop {
            let start = self.pos;
            // A failure of the conversion (not of the reading), said below.
            let mut failed: Option<String> = None;
            let (step, end) = {
                let mut r = Reader::at(&self.buf, start);
                let step = match &self.state {
                    State::Start => r.expect(b'{', "'{'").and_then(|()| {
                        r.empty_close(b'}')
                            .map(|empty| if empty { State::End } else { State::Key })
                    }),
                    State::Key => r.key().map(|k| {
                        let k = event::text(k).into_owned();
                        if k == "traceEvents" {
                            State::EventsOpen
                        } else {
                            State::Value(k)
                        }
                    }),
                    State::Value(key) => r.skip_value().map(|()| {
                        // Leading whitespace is not part of the value.
                        let raw = r.b[start..r.pos].trim_ascii_start();
                        if let Err(msg) = self.conv.member(key.clone(), raw) {
                            failed = Some(msg);
                        }
                        State::AfterMember
                    }),
                    State::AfterMember => {
                        r.comma_or(b'}')
                            .map(|more| if more { State::Key } else { State::End })
                    }
                    State::EventsOpen => r.expect(b'[', "'[' of traceEvents").and_then(|()| {
                        r.empty_close(b']').map(|empty| {
                            if empty {
                                State::AfterMember
                            } else {
                                State::Event
                            }
                        })
                    }),
                    // Read whole before anything is converted: an event cut by
                    // the end of the buffer is read again with more bytes.
                    State::Event => event::read_event_at(&mut r).map(|e| {
                        if let Err(err) = self.conv.event(e.as_ref()) {
                            failed = Some(err.to_string());
                        }
                        State::AfterEvent
                    }),
                    State::AfterEvent => r.comma_or(b']').map(|more| {
                        if more {
                            State::Event
                        } else {
                            State::AfterMember
                        }
                    }),
                    State::End => {
                        r.skip_ws();
                        if r.pos < r.b.len() {
                            Err(ReadError::Syntax {
                                pos: r.pos,
                                msg: "text after the trace's closing '}'",
                            })
                        } else {
                            Err(ReadError::Incomplete)
                        }
                    }
                };
                (step, r.pos)
            };
            if let Some(msg) = failed {
                return Err(self.fail(start, msg));
            }
            let next = match step {
                Ok(next) => next,
                Err(ReadError::Incomplete) => break,
                Err(ReadError::Syntax { pos, msg }) => return Err(self.fail(pos, msg)),
                Err(ReadError::OverBudget) => return Err(self.fail(self.pos, "value too large")),
            };
            if self.state == State::Event {
                self.events += 1;
            }
            self.pos = end;
            self.state = next;
        }
        // Keep only what is still unread.
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.offset += self.pos as u64;
            self.pos = 0;
        }
        Ok(())
    }

    /// The Perfetto trace's sink, and what the trace holds. An error when the
    /// JSON text ended before the trace did.
    pub fn finish(mut self) -> io::Result<(W, PftraceStats)> {
        if let Some(e) = &self.failed {
            return Err(io::Error::other(e.clone()));
        }
        // A number at the very end would still wait for its last digit.
        self.buf.push(b' ');
        self.run()?;
        if self.state != State::End {
            let at = self.buf.len();
            return Err(self.fail(at, "the JSON trace ended before its closing '}'"));
        }
        self.conv.finish().map_err(io::Error::other)
    }
}

impl<W: Write> Write for PftraceSink<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_all(data)?;
        Ok(data.len())
    }

    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        if let Some(e) = &self.failed {
            return Err(io::Error::other(e.clone()));
        }
        self.buf.extend_from_slice(data);
        self.run()
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = r#"{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"H200"}],
      "traceEvents":[
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
      ],"baseTimeNanoseconds":1000000000,"traceName":"t"}"#;

    fn convert(chunks: &[usize]) -> io::Result<(Vec<u8>, PftraceStats)> {
        let opts = WriterOptions {
            realtime_now_ns: Some(1),
            ..WriterOptions::default()
        };
        let mut sink = PftraceSink::with_options(Vec::new(), 1_000_000_000, opts)?;
        let mut rest = TRACE.as_bytes();
        let mut sizes = chunks.iter().cycle();
        while !rest.is_empty() {
            let n = (*sizes.next().unwrap_or(&1)).min(rest.len()).max(1);
            sink.write_all(&rest[..n])?;
            rest = &rest[n..];
        }
        sink.finish()
    }

    #[test]
    fn the_trace_comes_out_the_same_however_the_text_is_cut() {
        let (whole, stats) = convert(&[TRACE.len()]).unwrap();
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
    fn a_cut_or_overlong_text_is_an_error_naming_the_byte() {
        let mut sink = PftraceSink::new(Vec::new(), 0).unwrap();
        sink.write_all(&TRACE.as_bytes()[..200]).unwrap();
        let err = sink.finish().unwrap_err().to_string();
        assert!(err.contains("ended before its closing"), "{err}");
        let mut sink = PftraceSink::new(Vec::new(), 1_000_000_000).unwrap();
        let err = sink.write_all(format!("{TRACE} x").as_bytes()).unwrap_err();
        assert!(err.to_string().contains("text after the trace"), "{err}");
        assert!(sink.write_all(b" ").is_err(), "a failed sink stays failed");
    }

    #[test]
    fn a_slice_out_of_time_order_keeps_the_flow_that_follows_it() {
        // As in a merge: a thread's CPU ops first, then the window's runtime
        // calls on the same thread, earlier in time than the last op.
        let mut text = String::from(r#"{"traceEvents":["#);
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
            r#"{"ph":"f","id":9,"pid":0,"tid":7,"ts":12,"cat":"ac2g","name":"ac2g","bp":"e"}]}"#
        ));
        let mut sink = PftraceSink::new(Vec::new(), 0).unwrap();
        sink.write_all(text.as_bytes()).unwrap();
        let (_, stats) = sink.finish().unwrap();
        assert_eq!((stats.flow_events_bound, stats.flow_events_unbound), (2, 0));
        assert_eq!(stats.slices, 1002);
    }

    #[test]
    fn a_base_time_other_than_the_events_is_refused() {
        let mut sink = PftraceSink::new(Vec::new(), 5).unwrap();
        let err = sink.write_all(TRACE.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("baseTimeNanoseconds is 1000000000"), "{err}");
    }
}
