//! The same events as cupmon's Chrome JSON trace writes them
//! (cupmon-trace merge/entries.rs: `X` events with args, `s`/`f` flows, `M`
//! metadata; times in µs relative to the first event), for the size and speed
//! comparison. Formatting follows cupmon's ObjectWriter: no spaces, shortest floats.

use std::io::Write;

use crate::workload::{stream_id, Pair, CPU_PID, CPU_TID, STREAMS, T0};

fn us(ns: u64) -> f64 {
    (ns - T0) as f64 / 1000.0
}

pub struct JsonWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    names: Vec<String>,
    first: bool,
    ryu: ryu::Buffer,
    ints: itoa::Buffer,
}

impl<W: Write> JsonWriter<W> {
    pub fn new(out: W, names: Vec<String>) -> Self {
        let mut w = Self {
            out,
            buf: Vec::with_capacity(1 << 20),
            names,
            first: true,
            ryu: ryu::Buffer::new(),
            ints: itoa::Buffer::new(),
        };
        w.buf.extend_from_slice(b"{\"traceEvents\":[");
        for s in 0..STREAMS {
            let tid = stream_id(s);
            w.raw(&format!("{{\"ph\":\"M\",\"name\":\"thread_name\",\"ts\":0.0,\"pid\":0,\"tid\":{tid},\"args\":{{\"name\":\"stream {tid} \"}}}}"));
        }
        w.raw(r#"{"ph":"M","name":"process_labels","ts":0.0,"pid":0,"tid":0,"args":{"labels":"GPU 0"}}"#);
        w
    }

    fn raw(&mut self, s: &str) {
        self.sep();
        self.buf.extend_from_slice(s.as_bytes());
    }

    fn sep(&mut self) {
        if !self.first {
            self.buf.extend_from_slice(b",\n");
        }
        self.first = false;
    }

    fn int(&mut self, key: &str, v: i64) {
        self.buf.push(b'"');
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
        self.buf.extend_from_slice(self.ints.format(v).as_bytes());
    }

    fn float(&mut self, key: &str, v: f64) {
        self.buf.push(b'"');
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
        self.buf.extend_from_slice(self.ryu.format(v).as_bytes());
    }

    fn string(&mut self, key: &str, v: &str) {
        // The names here need no escaping.
        self.buf.push(b'"');
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":\"");
        self.buf.extend_from_slice(v.as_bytes());
        self.buf.push(b'"');
    }

    fn flow(&mut self, ph: &str, id: u64, pid: i64, tid: i64, ts: f64) {
        self.sep();
        self.buf.extend_from_slice(b"{");
        self.string("ph", ph);
        self.buf.push(b',');
        self.int("id", id as i64);
        self.buf.push(b',');
        self.int("pid", pid);
        self.buf.push(b',');
        self.int("tid", tid);
        self.buf.push(b',');
        self.float("ts", ts);
        self.buf
            .extend_from_slice(b",\"cat\":\"ac2g\",\"name\":\"ac2g\"");
        if ph == "f" {
            self.buf.extend_from_slice(b",\"bp\":\"e\"");
        }
        self.buf.push(b'}');
    }

    pub fn pair(&mut self, p: &Pair) -> std::io::Result<()> {
        let (ts, dur) = (us(p.launch_ts), p.launch_dur as f64 / 1000.0);
        self.sep();
        self.buf.extend_from_slice(
            b"{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",",
        );
        self.int("pid", i64::from(CPU_PID));
        self.buf.push(b',');
        self.int("tid", CPU_TID);
        self.buf.push(b',');
        self.float("ts", ts);
        self.buf.push(b',');
        self.float("dur", dur);
        self.buf.extend_from_slice(b",\"args\":{");
        self.int("cbid", p.cbid);
        self.buf.push(b',');
        self.int("correlation", p.correlation as i64);
        self.buf.extend_from_slice(b"}}");
        if p.has_flow {
            self.flow("s", p.correlation, i64::from(CPU_PID), CPU_TID, ts);
        }
        let tid = stream_id(p.stream);
        let (ts, dur) = (us(p.kernel_ts), p.kernel_dur as f64 / 1000.0);
        self.sep();
        self.buf
            .extend_from_slice(b"{\"ph\":\"X\",\"cat\":\"kernel\",");
        let name = std::mem::take(&mut self.names[p.kernel]);
        self.string("name", &name);
        self.names[p.kernel] = name;
        self.buf.extend_from_slice(b",\"pid\":0,");
        self.int("tid", tid);
        self.buf.push(b',');
        self.float("ts", ts);
        self.buf.push(b',');
        self.float("dur", dur);
        self.buf
            .extend_from_slice(b",\"args\":{\"device\":0,\"context\":1,");
        self.int("stream", tid);
        self.buf.push(b',');
        self.int("correlation", p.correlation as i64);
        self.buf.extend_from_slice(b"}}");
        if p.has_flow {
            self.flow("f", p.correlation, 0, tid, ts);
        }
        if self.buf.len() >= 256 << 10 {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        self.buf.extend_from_slice(b"]}\n");
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        Ok(self.out)
    }
}
