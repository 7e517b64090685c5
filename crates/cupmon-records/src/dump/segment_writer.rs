//! Writing a flight-recorder dump's segments: each completed buffer becomes one frame
//! (its time index and its compact encoding) appended to the active segment, which is
//! closed when it reaches the segment size or age; closed segments are retired, oldest
//! first, to keep the dump within its budget (`--keep`) and age (`--keep-for`).
//!
//! The active segment is crash-safe as PyTorch's raw file is: each frame is written
//! whole, and a reader stops at a cut last frame. The budget counts every segment
//! file and the side files; it is kept at each close by retiring closed segments until
//! they and one full segment fit, so the dump exceeds it by at most one segment.
//! A segment's launch-stack file (`launch_stacks.rs`) counts as part of the segment and
//! goes with it.

use std::collections::{BTreeMap, VecDeque};
use std::fs::{self, File};
use std::io::Write;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::compact::{ChunkCompressor, DEFAULT_LEVEL};
use super::frame::{FrameIndex, TimeSpan};
use super::launch_stacks::{launch_entries, launch_stacks_file_name, launch_stacks_header};
use super::seal::{DumpId, FrameSeal, SEAL_LEN};
use super::segment::{
    segment_file_name, IndexLine, RetireReason, Retired, SegmentIndexLog, SegmentSummary,
    SEGMENTS_DIR,
};
use super::{BufferCompletion, ChunkHeader, ChunkWriter, CHUNK_HEADER_LEN};
use crate::digest::{digest_file_name, write_digest, DigestBuilder, LaunchCounterSpan};
use crate::{KernelNameTable, Layout, Record};

/// Samples of a foreign clock kept per segment (its index line stays small).
const MAX_CLOCK_SAMPLES: usize = 4096;

/// When segments roll and what is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentPolicy {
    /// Close the active segment past this many bytes...
    pub segment_size: u64,
    /// ...or this long after it was opened.
    pub segment_period: Duration,
    /// The dump's disk budget.
    pub keep: u64,
    /// Retire segments whose records all ended longer ago than this.
    pub keep_for: Option<Duration>,
}

impl SegmentPolicy {
    /// The size segments actually roll at: never more than a quarter of the budget, so
    /// that a small budget still holds several segments.
    pub fn roll_size(&self) -> u64 {
        self.segment_size.min(self.keep / 4).max(4 << 10)
    }
}

/// What the writer did, for the monitor's counters and the meta.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SegmentStats {
    /// Activity-buffer bytes handed in.
    pub buffer_bytes: u64,
    /// Bytes written to segment files (frames and their chunk headers).
    pub bytes_written: u64,
    /// Frames stored uncompressed because the writer was behind.
    pub frames_stored: u64,
}

#[derive(Debug)]
struct Active {
    writer: ChunkWriter<BufWriter<File>>,
    summary: SegmentSummary,
    opened: Instant,
    native: TimeSpan,
    foreign: TimeSpan,
    /// The launch counter when the segment opened (`None`: not counted).
    launches_at_open: Option<u64>,
}

/// Reads the session's launch counter (kernels launched since it began counting);
/// `None` when the session does not count. Called at each roll only.
pub struct LaunchProbe(pub Box<dyn FnMut() -> Option<u64> + Send>);

impl std::fmt::Debug for LaunchProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LaunchProbe")
    }
}

/// Writes the segments of one dump.
#[derive(Debug)]
pub struct SegmentWriter {
    dir: PathBuf,
    policy: SegmentPolicy,
    next_segment: u32,
    active: Option<Active>,
    closed: VecDeque<SegmentSummary>,
    retired: Retired,
    index: SegmentIndexLog,
    compressor: Option<ChunkCompressor>,
    frame: Vec<u8>,
    stats: SegmentStats,
    /// The digest of the segment the next frames go into.
    digest: Option<DigestBuilder>,
    /// The dump's id, in every frame's seal and every digest.
    id: DumpId,
    /// The segment the last frame went into: its launches' stacks go into its file.
    last_frame_segment: Option<u32>,
    /// The launch-stack file being appended to, and its segment.
    stacks_out: Option<(u32, BufWriter<File>)>,
    /// Bytes of each live segment's launch-stack file.
    stacks_bytes: BTreeMap<u32, u64>,
    /// The launch counter, read at each open and close (see [`LaunchCounterSpan`]).
    launch_probe: Option<LaunchProbe>,
    /// The last close's reading: the next segment opens where this one closed, so
    /// launches between a close and the next buffer are the next segment's.
    launches_at_last_close: Option<u64>,
}

fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl SegmentWriter {
    /// Create `dump_dir/segments` (it must not hold segments yet); `id` is the dump's.
    pub fn create(dump_dir: &Path, policy: SegmentPolicy, id: DumpId) -> io::Result<Self> {
        let dir = dump_dir.join(SEGMENTS_DIR);
        fs::create_dir_all(&dir)?;
        let index = SegmentIndexLog::open(&dir)?;
        Ok(Self {
            dir,
            policy,
            next_segment: 1,
            active: None,
            closed: VecDeque::new(),
            retired: Retired::default(),
            index,
            compressor: None,
            frame: Vec::new(),
            stats: SegmentStats::default(),
            digest: None,
            id,
            last_frame_segment: None,
            stacks_out: None,
            stacks_bytes: BTreeMap::new(),
            launch_probe: None,
            launches_at_last_close: None,
        })
    }

    /// Put the launch counter's readings at each segment's open and close into its
    /// digest. The first segment opens at the count's start (0).
    pub fn count_launches_with(&mut self, probe: LaunchProbe) {
        self.launch_probe = Some(probe);
        self.launches_at_last_close = Some(0);
    }

    fn read_launches(&mut self) -> Option<u64> {
        self.launch_probe.as_mut().and_then(|probe| (probe.0)())
    }

    /// The dump's id.
    pub fn dump_id(&self) -> DumpId {
        self.id
    }

    fn digest(&mut self) -> &mut DigestBuilder {
        let period = self.policy.segment_period;
        self.digest
            .get_or_insert_with(|| DigestBuilder::for_segment(period))
    }

    /// Digest a record of the next buffer (see [`crate::digest`]).
    pub fn digest_record(&mut self, record: &Record, names: &KernelNameTable) {
        self.digest().add(record, names);
    }

    /// `records` of the next buffer are not digested.
    pub fn digest_skipped(&mut self, records: u64) {
        self.digest().skip(records);
    }

    pub fn stats(&self) -> SegmentStats {
        self.stats
    }

    /// What was retired so far.
    pub fn retired(&self) -> &Retired {
        &self.retired
    }

    /// Append one buffer as a frame. `layout` is the buffer's record layout (`None`
    /// when this cupmon does not know the CUPTI version: stored as it is); `index` its
    /// time index; `behind`: the writer is falling behind CUPTI, so store, not compress.
    /// Returns the segments retired by this write (the caller rewrites the meta).
    pub fn write(
        &mut self,
        completion: BufferCompletion,
        data: &[u8],
        layout: Option<Layout>,
        index: &FrameIndex,
        behind: bool,
    ) -> io::Result<(ChunkHeader, bool)> {
        self.encode(data, layout, index, behind)?;
        self.digest().add_buffer(data.len() as u64);
        if self.active.is_none() {
            self.open_next()?;
        }
        let active = self.active.as_mut().expect("opened above");
        // The seal covers the header this frame gets, so it is made for that header.
        let sealed_for = ChunkHeader {
            index: active.writer.next_index(),
            frame: true,
            sealed: true,
            valid_size: u32::try_from(self.frame.len()).unwrap_or(u32::MAX),
            completion,
        };
        FrameSeal::write(
            &mut self.frame,
            &sealed_for.to_bytes(),
            self.id,
            active.summary.segment,
        );
        let header = active.writer.write_sealed_frame(completion, &self.frame)?;
        debug_assert_eq!(header, sealed_for);
        self.last_frame_segment = Some(active.summary.segment);
        let written = (CHUNK_HEADER_LEN + self.frame.len()) as u64;
        let s = &mut active.summary;
        s.last_frame_at = Some(s.bytes);
        s.bytes += written;
        s.buffer_bytes += data.len() as u64;
        s.chunks += 1;
        s.records += u64::from(index.records);
        s.kernels += u64::from(index.kernels);
        // Samples of another client's clock convert its records; CUPTI's own clock
        // (Unix ns) needs none. Kept whole up to a bound, then every other one.
        if crate::clock::is_foreign(completion.cupti_completed_ns) {
            s.clock
                .push([completion.cupti_completed_ns, completion.unix_completed_ns]);
            if s.clock.len() > MAX_CLOCK_SAMPLES {
                let mut keep = false;
                s.clock.retain(|_| {
                    keep = !keep;
                    keep
                });
            }
        }
        active.native.join(index.native);
        active.foreign.join(index.foreign);
        self.stats.buffer_bytes += data.len() as u64;
        self.stats.bytes_written += written;
        // A segment's launch-stack file is part of it: it rolls on both.
        let stacks = self.stacks_bytes.get(&s.segment).copied().unwrap_or(0);
        let full = s.bytes + stacks >= self.policy.roll_size()
            || active.opened.elapsed() >= self.policy.segment_period;
        let mut retired = false;
        if full {
            self.close_active()?;
            retired = self.retire()?;
        } else if self.policy.keep_for.is_some() {
            retired = self.retire()?;
        }
        Ok((header, retired))
    }

    /// `(correlation id, stack)` of the launches whose records came in the last buffer
    /// written: appended to its segment's launch-stack file (made at its first pair),
    /// whose bytes count in the budget. Nothing before the first frame.
    pub fn add_launch_stacks(&mut self, pairs: &[(u32, u32)]) -> io::Result<()> {
        let Some(segment) = self.last_frame_segment else {
            return Ok(());
        };
        if pairs.is_empty() || !self.is_live(segment) {
            return Ok(());
        }
        if self.stacks_out.as_ref().map(|(s, _)| *s) != Some(segment) {
            if let Some((_, mut old)) = self.stacks_out.take() {
                old.flush()?;
            }
            let file = File::options()
                .create_new(true)
                .write(true)
                .open(self.dir.join(launch_stacks_file_name(segment)))?;
            let mut out = BufWriter::with_capacity(1 << 16, file);
            let header = launch_stacks_header();
            out.write_all(&header)?;
            *self.stacks_bytes.entry(segment).or_default() += header.len() as u64;
            self.stacks_out = Some((segment, out));
        }
        let (_, out) = self.stacks_out.as_mut().expect("opened above");
        let entries = launch_entries(pairs);
        out.write_all(&entries)?;
        *self.stacks_bytes.entry(segment).or_default() += entries.len() as u64;
        Ok(())
    }

    /// `segment` is the active one or closed and not retired.
    fn is_live(&self, segment: u32) -> bool {
        self.active.as_ref().map(|a| a.summary.segment) == Some(segment)
            || self.closed.iter().any(|s| s.segment == segment)
    }

    fn encode(
        &mut self,
        data: &[u8],
        layout: Option<Layout>,
        index: &FrameIndex,
        behind: bool,
    ) -> io::Result<()> {
        let mut body = std::mem::take(&mut self.frame);
        let result = match layout {
            Some(layout) if !behind => {
                let compressor = match &mut self.compressor {
                    Some(c) => c,
                    None => self
                        .compressor
                        .insert(ChunkCompressor::new(layout, DEFAULT_LEVEL)),
                };
                compressor.compress_into(data, &mut body)
            }
            _ => {
                self.stats.frames_stored += 1;
                ChunkCompressor::store_into(data, &mut body)
            }
        };
        result.map_err(io::Error::other)?;
        let mut frame = Vec::with_capacity(body.len() + super::frame::FRAME_INDEX_LEN + SEAL_LEN);
        frame.extend_from_slice(&index.to_bytes());
        // The seal's place: filled in once the frame's chunk header is known.
        frame.extend_from_slice(&[0; SEAL_LEN]);
        frame.extend_from_slice(&body);
        self.frame = frame;
        Ok(())
    }

    fn open_next(&mut self) -> io::Result<()> {
        let segment = self.next_segment;
        let path = self.dir.join(segment_file_name(segment));
        // create_new: a segment file is never overwritten.
        let file = File::options().write(true).create_new(true).open(&path)?;
        self.next_segment += 1;
        let launches_at_open = match self.launches_at_last_close.take() {
            Some(n) => Some(n),
            None => self.read_launches(),
        };
        self.active = Some(Active {
            writer: ChunkWriter::new(BufWriter::with_capacity(1 << 20, file)),
            summary: SegmentSummary {
                segment,
                opened_unix_ns: unix_ns(),
                ..SegmentSummary::default()
            },
            opened: Instant::now(),
            native: TimeSpan::EMPTY,
            foreign: TimeSpan::EMPTY,
            launches_at_open,
        });
        Ok(())
    }

    /// Close the active segment: its bytes on disk, then its line in the index.
    fn close_active(&mut self) -> io::Result<()> {
        let Some(active) = self.active.take() else {
            return Ok(());
        };
        // No fsync here: a killed process leaves its pages in the page cache, and a
        // sync per roll stalls the writer while CUPTI keeps filling buffers (a power
        // loss leaves a damaged tail, which readers skip). `finish` syncs.
        active.writer.finish()?;
        let mut summary = active.summary;
        summary.first_ns = active.native.get().map(|s| s.0);
        summary.last_ns = active.native.get().map(|s| s.1);
        summary.foreign_first = active.foreign.get().map(|s| s.0);
        summary.foreign_last = active.foreign.get().map(|s| s.1);
        summary.closed_unix_ns = unix_ns();
        let launches_at_close = self.read_launches();
        self.launches_at_last_close = launches_at_close;
        let launch_counter = match (active.launches_at_open, launches_at_close) {
            (Some(at_open), Some(at_close)) => Some(LaunchCounterSpan { at_open, at_close }),
            _ => None,
        };
        // The digest before the index line: a segment the index calls closed has its
        // digest, or none (a crash, a full disk: readers then digest its records).
        // A digest is written only where records were digested: a caller that digests
        // none (it hands buffers only) leaves readers to read them.
        let digest = self
            .digest
            .take()
            .map(|d| d.finish().0)
            .filter(|d| d.records + d.foreign + d.skipped > 0 || summary.records == 0);
        if let Some(mut digest) = digest {
            // Records the caller did not hand over are records the digest lacks.
            let seen = digest.records + digest.foreign + digest.skipped;
            digest.skipped += summary.records.saturating_sub(seen);
            digest.dump_id = Some(self.id.to_string());
            digest.segment = Some(summary.segment);
            digest.launch_counter = launch_counter;
            if let Ok((bytes, sum)) = write_digest(&self.dir, summary.segment, &digest) {
                summary.digest_bytes = bytes;
                summary.digest_xxh3 = Some(sum);
                self.stats.bytes_written += bytes;
            }
        }
        self.index.append(&IndexLine::Closed(summary.clone()))?;
        self.closed.push_back(summary);
        Ok(())
    }

    /// Retire the oldest closed segments while they and one full segment exceed the
    /// budget, or while the oldest is older than `keep_for`. True when any went.
    fn retire(&mut self) -> io::Result<bool> {
        let mut any = false;
        let side = side_file_bytes(self.dir.parent().unwrap_or(&self.dir));
        let allowed = self
            .policy
            .keep
            .saturating_sub(self.policy.roll_size())
            .saturating_sub(side)
            .saturating_sub(self.active_stacks_bytes());
        let cutoff = self
            .policy
            .keep_for
            .map(|d| unix_ns().saturating_sub(d.as_nanos() as u64));
        loop {
            let closed_bytes: u64 = self
                .closed
                .iter()
                .map(|s| s.bytes + s.digest_bytes + self.stacks_bytes.get(&s.segment).unwrap_or(&0))
                .sum();
            let Some(oldest) = self.closed.front() else {
                break;
            };
            let reason = if closed_bytes > allowed {
                RetireReason::Keep
            } else if cutoff.is_some_and(|c| oldest.last_ns.is_some_and(|last| last < c)) {
                RetireReason::KeepFor
            } else {
                break;
            };
            let oldest = self.closed.pop_front().expect("checked above");
            // The line first: a crash between the two leaves a file readers ignore.
            self.index.append(&IndexLine::Retired {
                segment: oldest.segment,
                reason,
                at_unix_ns: unix_ns(),
            })?;
            if self.stacks_out.as_ref().map(|(s, _)| *s) == Some(oldest.segment) {
                self.stacks_out = None;
            }
            self.stacks_bytes.remove(&oldest.segment);
            for name in [
                segment_file_name(oldest.segment),
                digest_file_name(oldest.segment),
                launch_stacks_file_name(oldest.segment),
            ] {
                match fs::remove_file(self.dir.join(name)) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
            self.retired.add(&oldest);
            any = true;
        }
        Ok(any)
    }

    /// Bytes of the active segment's launch-stack file.
    fn active_stacks_bytes(&self) -> u64 {
        self.active
            .as_ref()
            .and_then(|a| self.stacks_bytes.get(&a.summary.segment))
            .copied()
            .unwrap_or(0)
    }

    /// Write what is buffered to the active segment's file (and to the launch-stack
    /// file).
    pub fn flush(&mut self) -> io::Result<()> {
        if let Some((_, out)) = &mut self.stacks_out {
            out.flush()?;
        }
        match &mut self.active {
            Some(a) => a.writer.flush(),
            None => Ok(()),
        }
    }

    /// Close the active segment (a clean end of the session) and apply the budget.
    pub fn finish(&mut self) -> io::Result<bool> {
        if let Some((_, mut out)) = self.stacks_out.take() {
            out.flush()?;
        }
        let last = self.active.as_ref().map(|a| a.summary.segment);
        self.close_active()?;
        if let Some(segment) = last {
            File::open(self.dir.join(segment_file_name(segment)))?.sync_data()?;
        }
        self.retire()
    }
}

/// Bytes of the dump's files outside `segments/` (meta and side files).
fn side_file_bytes(dump_dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dump_dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}
