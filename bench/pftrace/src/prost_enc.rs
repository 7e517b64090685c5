//! The same trace with prost messages generated from Perfetto's protos
//! (build.rs): the packets cupmon-pftrace writes, built as structs and
//! encoded by prost. No overlap lanes or reorder window, so it does less
//! work than cupmon-pftrace per slice; the comparison favours prost.

#[allow(
    clippy::all,
    dead_code,
    missing_debug_implementations,
    unused_qualifications
)]
mod pb {
    include!(concat!(env!("OUT_DIR"), "/perfetto.protos.rs"));
}

use std::io::Write;

use pb::trace_packet::{Data, OptionalTrustedPacketSequenceId};
use pb::{debug_annotation as da, track_event as te};
use prost::Message;
use rustc_hash::FxHashMap;

use crate::workload::{stream_id, Pair, CPU_PID, CPU_TID, STREAMS, T0};

const SEQ: OptionalTrustedPacketSequenceId =
    OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(1);

pub struct ProstWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    names: Vec<String>,
    name_iids: FxHashMap<String, u64>,
    cat_iids: FxHashMap<String, u64>,
    arg_iids: FxHashMap<String, u64>,
    thread_uuid: u64,
    stream_uuids: Vec<u64>,
}

fn iid(table: &mut FxHashMap<String, u64>, s: &str) -> (u64, bool) {
    if let Some(&i) = table.get(s) {
        return (i, false);
    }
    let i = table.len() as u64 + 1;
    table.insert(s.to_owned(), i);
    (i, true)
}

impl<W: Write> ProstWriter<W> {
    pub fn new(out: W, names: Vec<String>) -> Self {
        let mut w = Self {
            out,
            buf: Vec::with_capacity(1 << 20),
            names,
            name_iids: FxHashMap::default(),
            cat_iids: FxHashMap::default(),
            arg_iids: FxHashMap::default(),
            thread_uuid: 2,
            stream_uuids: (0..STREAMS).map(|s| 4 + s).collect(),
        };
        w.packet(&pb::TracePacket {
            optional_trusted_packet_sequence_id: Some(SEQ),
            sequence_flags: Some(1),
            trace_packet_defaults: Some(pb::TracePacketDefaults {
                timestamp_clock_id: Some(1),
                ..Default::default()
            }),
            data: Some(Data::ClockSnapshot(pb::ClockSnapshot {
                clocks: vec![pb::clock_snapshot::Clock {
                    clock_id: Some(1),
                    timestamp: Some(T0),
                    ..Default::default()
                }],
                primary_trace_clock: Some(1),
            })),
            ..Default::default()
        });
        let process = |uuid, pid, label: &str, sort| pb::TrackDescriptor {
            uuid: Some(uuid),
            sibling_order_rank: Some(sort),
            process: Some(pb::ProcessDescriptor {
                pid: Some(pid),
                process_name: Some("python".into()),
                legacy_sort_index: Some(sort),
                process_labels: vec![label.into()],
                ..Default::default()
            }),
            ..Default::default()
        };
        let thread = |uuid, pid, tid: i64, name: String| pb::TrackDescriptor {
            uuid: Some(uuid),
            sibling_order_rank: Some(tid as i32),
            thread: Some(pb::ThreadDescriptor {
                pid: Some(pid),
                tid: Some(tid),
                thread_name: Some(name),
                legacy_sort_index: Some(tid as i32),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut descriptors = vec![
            process(1, CPU_PID, "CPU", CPU_PID),
            thread(2, CPU_PID, CPU_TID, format!("thread {CPU_TID}")),
            process(3, 0, "GPU 0", 5_000_000),
        ];
        for s in 0..STREAMS {
            let tid = stream_id(s);
            descriptors.push(thread(4 + s, 0, tid, format!("stream {tid} ")));
        }
        for d in descriptors {
            w.packet(&pb::TracePacket {
                optional_trusted_packet_sequence_id: Some(SEQ),
                sequence_flags: Some(2),
                data: Some(Data::TrackDescriptor(d)),
                ..Default::default()
            });
        }
        w
    }

    fn packet(&mut self, p: &pb::TracePacket) {
        self.buf.push(0x0A); // Trace.packet, length-delimited
        p.encode_length_delimited(&mut self.buf)
            .expect("a Vec grows");
    }

    fn arg(&mut self, interned: &mut pb::InternedData, name: &str, v: i64) -> pb::DebugAnnotation {
        let (i, new) = iid(&mut self.arg_iids, name);
        if new {
            interned
                .debug_annotation_names
                .push(pb::DebugAnnotationName {
                    iid: Some(i),
                    name: Some(name.into()),
                });
        }
        pb::DebugAnnotation {
            name_field: Some(da::NameField::NameIid(i)),
            value: Some(da::Value::IntValue(v)),
            ..Default::default()
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn slice(
        &mut self,
        track: u64,
        ts: u64,
        dur: u64,
        name: &str,
        cat: &str,
        args: &[(&str, i64)],
        flows: Vec<u64>,
        terminating: Vec<u64>,
    ) {
        let mut interned = pb::InternedData::default();
        let (name_iid, new) = iid(&mut self.name_iids, name);
        if new {
            interned.event_names.push(pb::EventName {
                iid: Some(name_iid),
                name: Some(name.into()),
            });
        }
        let (cat_iid, new) = iid(&mut self.cat_iids, cat);
        if new {
            interned.event_categories.push(pb::EventCategory {
                iid: Some(cat_iid),
                name: Some(cat.into()),
            });
        }
        let debug_annotations = args
            .iter()
            .map(|&(n, v)| self.arg(&mut interned, n, v))
            .collect();
        let has_interned = !interned.event_names.is_empty()
            || !interned.event_categories.is_empty()
            || !interned.debug_annotation_names.is_empty();
        let begin = pb::TracePacket {
            timestamp: Some(ts),
            optional_trusted_packet_sequence_id: Some(SEQ),
            sequence_flags: Some(2),
            interned_data: has_interned.then_some(interned),
            data: Some(Data::TrackEvent(pb::TrackEvent {
                r#type: Some(te::Type::SliceBegin as i32),
                track_uuid: Some(track),
                name_field: Some(te::NameField::NameIid(name_iid)),
                category_iids: vec![cat_iid],
                debug_annotations,
                flow_ids: flows,
                terminating_flow_ids: terminating,
                ..Default::default()
            })),
            ..Default::default()
        };
        self.packet(&begin);
        let end = pb::TracePacket {
            timestamp: Some(ts + dur),
            optional_trusted_packet_sequence_id: Some(SEQ),
            sequence_flags: Some(2),
            data: Some(Data::TrackEvent(pb::TrackEvent {
                r#type: Some(te::Type::SliceEnd as i32),
                track_uuid: Some(track),
                ..Default::default()
            })),
            ..Default::default()
        };
        self.packet(&end);
    }

    pub fn pair(&mut self, p: &Pair) -> std::io::Result<()> {
        let flows = if p.has_flow {
            vec![p.correlation]
        } else {
            Vec::new()
        };
        let corr = p.correlation as i64;
        self.slice(
            self.thread_uuid,
            p.launch_ts,
            p.launch_dur,
            "cudaLaunchKernel",
            "cuda_runtime",
            &[("cbid", p.cbid), ("correlation", corr)],
            flows.clone(),
            Vec::new(),
        );
        let name = std::mem::take(&mut self.names[p.kernel]);
        let sid = stream_id(p.stream);
        let args = [
            ("device", 0),
            ("context", 1),
            ("stream", sid),
            ("correlation", corr),
        ];
        self.slice(
            self.stream_uuids[p.stream as usize],
            p.kernel_ts,
            p.kernel_dur,
            &name,
            "kernel",
            &args,
            Vec::new(),
            flows,
        );
        self.names[p.kernel] = name;
        if self.buf.len() >= 256 << 10 {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        Ok(self.out)
    }
}
