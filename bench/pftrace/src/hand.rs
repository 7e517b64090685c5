//! The workload through cupmon-pftrace.

use std::io::Write;

use cupmon_pftrace::{
    Arg, ArgValue, PftraceError, PftraceSummary, PftraceWriter, Slice, TrackId, WriterOptions,
};

use crate::workload::{stream_id, Pair, CPU_PID, CPU_TID, STREAMS, T0};

pub struct Hand<W: Write> {
    w: PftraceWriter<W>,
    names: Vec<String>,
    thread: TrackId,
    streams: Vec<TrackId>,
}

impl<W: Write> Hand<W> {
    pub fn new(out: W, names: Vec<String>) -> Result<Self, PftraceError> {
        let opts = WriterOptions {
            realtime_now_ns: Some(T0),
            ..WriterOptions::default()
        };
        let mut w = PftraceWriter::with_options(out, opts)?;
        w.process(CPU_PID, "python", &["CPU"], CPU_PID)?;
        let thread = w.thread(
            CPU_PID,
            CPU_TID,
            &format!("thread {CPU_TID}"),
            CPU_TID as i32,
        )?;
        w.process(0, "python", &["GPU 0"], 5_000_000)?;
        let streams = (0..STREAMS)
            .map(|s| {
                let tid = stream_id(s);
                w.thread(0, tid, &format!("stream {tid} "), tid as i32)
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            w,
            names,
            thread,
            streams,
        })
    }

    pub fn pair(&mut self, p: &Pair) -> Result<(), PftraceError> {
        let corr = [p.correlation];
        let flows: &[u64] = if p.has_flow { &corr } else { &[] };
        let cpu_args = [
            Arg::new("cbid", ArgValue::Int(p.cbid)),
            Arg::new("correlation", ArgValue::Int(p.correlation as i64)),
        ];
        self.w.slice(
            self.thread,
            &Slice {
                category: "cuda_runtime",
                args: &cpu_args,
                flow_ids: flows,
                ..Slice::new(p.launch_ts, p.launch_dur, "cudaLaunchKernel")
            },
        )?;
        let gpu_args = [
            Arg::new("device", ArgValue::Int(0)),
            Arg::new("context", ArgValue::Int(1)),
            Arg::new("stream", ArgValue::Int(stream_id(p.stream))),
            Arg::new("correlation", ArgValue::Int(p.correlation as i64)),
        ];
        self.w.slice(
            self.streams[p.stream as usize],
            &Slice {
                category: "kernel",
                args: &gpu_args,
                terminating_flow_ids: flows,
                ..Slice::new(p.kernel_ts, p.kernel_dur, &self.names[p.kernel])
            },
        )
    }

    pub fn finish(self) -> Result<(W, PftraceSummary), PftraceError> {
        self.w.finish()
    }
}
