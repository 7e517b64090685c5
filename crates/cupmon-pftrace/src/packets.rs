//! Packet framing: `TracePacket`s on this writer's sequence, each a
//! length-delimited `Trace.packet`, encoded into a buffer that goes out
//! every 256 KiB.

use std::io::Write;

use crate::error::PftraceError;
use crate::fields::{clock, clock_snapshot as cs, defaults, packet, trace};
use crate::wire;

const FLUSH_BYTES: usize = 256 << 10;

#[derive(Debug)]
pub(crate) struct Packets<W: Write> {
    sink: W,
    /// Packets not yet written to `sink`; events are encoded straight in.
    pub out: Vec<u8>,
    sequence_id: u32,
    pub packets: u64,
    bytes: u64,
}

impl<W: Write> Packets<W> {
    pub fn new(sink: W, sequence_id: u32) -> Self {
        Self {
            sink,
            out: Vec::with_capacity(FLUSH_BYTES + (64 << 10)),
            sequence_id,
            packets: 0,
            bytes: 0,
        }
    }

    /// The first packet: clears the sequence's incremental state, makes
    /// REALTIME the trace's clock (a ClockSnapshot with `primary_trace_clock`)
    /// and the clock of every later packet's timestamp (TracePacketDefaults),
    /// as Perfetto's clock-sync docs describe.
    pub fn preamble(&mut self, realtime_now_ns: u64, extra_clocks: &[(u32, u64)]) {
        let out = &mut self.out;
        let at = wire::begin(out, trace::PACKET);
        wire::uint(
            out,
            packet::TRUSTED_PACKET_SEQUENCE_ID,
            u64::from(self.sequence_id),
        );
        wire::uint(
            out,
            packet::SEQUENCE_FLAGS,
            packet::SEQ_INCREMENTAL_STATE_CLEARED,
        );
        let d = wire::begin(out, packet::TRACE_PACKET_DEFAULTS);
        wire::uint(
            out,
            defaults::TIMESTAMP_CLOCK_ID,
            u64::from(clock::REALTIME),
        );
        wire::end(out, d);
        let snap = wire::begin(out, packet::CLOCK_SNAPSHOT);
        let clocks = std::iter::once((clock::REALTIME, realtime_now_ns));
        for (id, ts) in clocks.chain(extra_clocks.iter().copied()) {
            let c = wire::begin(out, cs::CLOCKS);
            wire::uint(out, cs::CLOCK_ID, u64::from(id));
            wire::uint(out, cs::CLOCK_TIMESTAMP, ts);
            wire::end(out, c);
        }
        wire::uint(out, cs::PRIMARY_TRACE_CLOCK, u64::from(clock::REALTIME));
        wire::end(out, snap);
        wire::end(out, at);
        self.packets += 1;
    }

    /// Opens a packet; every packet after the first needs the sequence's
    /// incremental state (defaults, interned strings).
    pub fn open(&mut self, ts_ns: Option<u64>) -> wire::Nested {
        let out = &mut self.out;
        let at = wire::begin(out, trace::PACKET);
        if let Some(ts) = ts_ns {
            wire::uint(out, packet::TIMESTAMP, ts);
        }
        wire::uint(
            out,
            packet::TRUSTED_PACKET_SEQUENCE_ID,
            u64::from(self.sequence_id),
        );
        wire::uint(
            out,
            packet::SEQUENCE_FLAGS,
            packet::SEQ_NEEDS_INCREMENTAL_STATE,
        );
        at
    }

    /// Closes a packet, adding the interned strings first seen since the last
    /// one (`pending`): so they precede, in the file, every event that uses them.
    pub fn close(&mut self, at: wire::Nested, pending: &mut Vec<u8>) -> Result<(), PftraceError> {
        if !pending.is_empty() {
            wire::bytes(&mut self.out, packet::INTERNED_DATA, pending);
            pending.clear();
        }
        wire::end(&mut self.out, at);
        self.packets += 1;
        if self.out.len() >= FLUSH_BYTES {
            self.flush_out()?;
        }
        Ok(())
    }

    fn flush_out(&mut self) -> Result<(), PftraceError> {
        self.sink.write_all(&self.out)?;
        self.bytes += self.out.len() as u64;
        self.out.clear();
        Ok(())
    }

    /// Writes out the buffer, flushes the sink; the bytes written in all.
    pub fn bytes_after_flush(&mut self) -> Result<u64, PftraceError> {
        self.flush_out()?;
        self.sink.flush()?;
        Ok(self.bytes)
    }

    pub fn into_sink(self) -> W {
        self.sink
    }
}
