//! Writing the elements of `traceEvents`: a buffer of serialised events with
//! the separating commas, flushed to the output in large blocks.

use std::io::{self, Write};

const FLUSH_AT: usize = 1 << 20;

#[derive(Debug)]
pub(crate) struct EventSink<W: Write> {
    out: W,
    pub buf: Vec<u8>,
    first: bool,
    pub written: u64,
}

impl<W: Write> EventSink<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            first: true,
            written: 0,
        }
    }

    /// Start the next array element (counted in `written`); returns the
    /// buffer to write it into.
    #[inline]
    pub fn element(&mut self) -> &mut Vec<u8> {
        if self.first {
            self.first = false;
        } else {
            self.buf.push(b',');
        }
        self.written += 1;
        &mut self.buf
    }

    /// Call after each element: hands full blocks to the output.
    #[inline]
    pub fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= FLUSH_AT {
            self.flush_buf()?;
        }
        Ok(())
    }

    pub fn flush_buf(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Write elements that are already serialised (a run of CPU events, with
    /// their own separators) through `copy`, which writes to the output.
    /// They are not counted in `written`.
    pub fn raw_elements(&mut self, copy: impl FnOnce(&mut W) -> io::Result<()>) -> io::Result<()> {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        self.flush_buf()?;
        copy(&mut self.out)
    }

    /// Flush everything and hand the output back.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush_buf()?;
        Ok(self.out)
    }
}
