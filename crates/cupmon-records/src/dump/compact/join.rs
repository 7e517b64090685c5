//! The decoder's half of the columns transform: rebuilds the activity buffer from the
//! section stream, checking every count, id and length against the kind table and the
//! header before using it (any input is safe: errors, never panics, and no buffer
//! larger than the header's checked lengths).

use super::columns::{Cursor, SplitColumn};
use super::delta::{self, Predictor};
use super::error::CompactError;
use super::header::CompactHeader;
use super::table::{KindEntry, MAX_DELTA_FIELDS};
use crate::{ActivityKind, Layout};

/// Records whose column values are decoded at a time: the values of one window of
/// every column of a kind stay in the L1 cache (a whole buffer's, 8 bytes a value,
/// would not), and each column is decoded one byte plane at a time.
const WINDOW: usize = 256;

/// The windows' value buffers, kept between buffers.
#[derive(Debug, Default)]
pub(crate) struct JoinScratch {
    spare: Vec<Vec<u64>>,
}

impl JoinScratch {
    fn take(&mut self, len: usize) -> Vec<u64> {
        let mut v = self.spare.pop().unwrap_or_default();
        v.clear();
        v.resize(len, 0);
        v
    }

    fn give_back(&mut self, kinds: Vec<KindColumns<'_>>) {
        self.spare.extend(kinds.into_iter().map(|k| k.window));
    }
}

/// One kind's columns within the section stream, and its decoding state.
pub(super) struct KindColumns<'a> {
    pub(super) entry: KindEntry,
    ids: SplitColumn<'a>,
    deltas: Vec<SplitColumn<'a>>,
    /// The values of records `window_start..window_end`: the template ids, then each
    /// delta field's, `WINDOW` apart.
    window: Vec<u64>,
    window_start: usize,
    window_end: usize,
    /// Row-major templates (`templates * unit` bytes, delta fields zero).
    pub(super) shapes: Vec<u8>,
    /// Records of this kind decoded so far.
    pub(super) next: usize,
    /// Per delta field: the last non-zero value of the field its `Prev` predictor names.
    last: [u64; MAX_DELTA_FIELDS],
    /// The last step per template of each `TemplateStep` field (numbered in field
    /// order: its `slot`), `templates` apart.
    steps: Vec<u64>,
    /// The delta fields' rules, resolved once per buffer: the fields stored in one
    /// byte or more (the others are zero in every record, as in the templates).
    pub(super) plan: Vec<FieldOp>,
    /// After each record: `last[j] = value of field i` where non-zero, per `(j, i)`
    /// with `i != j` (a field predicted by its own last value updates it at once).
    prev_updates: Vec<(usize, usize)>,
    /// The delta fields' values of the record decoded last (those not in `plan`
    /// stay zero).
    pub(super) values: [u64; MAX_DELTA_FIELDS],
}

/// How one delta field is rebuilt (its [`Predictor`], with indices resolved).
#[derive(Debug, Clone, Copy)]
pub(super) struct FieldOp {
    /// The field's index among the kind's delta fields.
    pub(super) j: usize,
    /// Where its values start in the window: `(j + 1) * WINDOW`.
    col: usize,
    pub(super) offset: usize,
    pub(super) size: u8,
    mask: u64,
    rule: Rule,
}

#[derive(Debug, Clone, Copy)]
enum Rule {
    /// `last[j]`, the field's own last non-zero value (a counter), which the
    /// field's new value replaces unless it is zero.
    PrevSelf,
    /// `last[j]`, the last non-zero value of another field (`prev_updates`).
    Prev,
    /// Field `i` of this record.
    Field(usize),
    /// Field `i` of this record plus the template's last step, kept at
    /// `steps[slot * templates + id]`.
    Step { i: usize, slot: usize },
}

impl KindColumns<'_> {
    /// Whether every record's template id names one of the kind's templates.
    pub(super) fn ids_in_range(&self) -> bool {
        let e = &self.entry;
        if e.id_width == 0 {
            // Record `r` uses template `r` (as many as records) or template 0.
            return true;
        }
        let records = e.records as usize;
        let mut ids = [0u64; WINDOW];
        (0..records).step_by(WINDOW).all(|start| {
            let ids = &mut ids[..WINDOW.min(records - start)];
            self.ids.values_at(start, ids);
            ids.iter().all(|&id| id < u64::from(e.templates))
        })
    }

    /// Decode the window of records from `start`.
    fn fill_window(&mut self, start: usize) {
        let n = WINDOW.min(self.entry.records as usize - start);
        self.ids.values_at(start, &mut self.window[..n]);
        for op in &self.plan {
            self.deltas[op.j].values_at(start, &mut self.window[op.col..][..n]);
        }
        (self.window_start, self.window_end) = (start, start + n);
    }

    /// Decode the kind's next record: its template id, with the values of its delta
    /// fields in `values` (the rules `split.rs` replays).
    #[inline]
    pub(super) fn advance(&mut self) -> Result<usize, CompactError> {
        let r = self.next;
        if r >= self.window_end {
            self.fill_window(r);
        }
        let w = r - self.window_start;
        let e = &self.entry;
        let id = e.template_of(r, self.window[w]) as u32;
        if id >= e.templates {
            let (kind, templates) = (e.kind, e.templates);
            return Err(CompactError::TemplateId {
                kind,
                record: r,
                id,
                templates,
            });
        }
        let t = e.templates as usize;
        let id = id as usize;
        let values = &mut self.values;
        for op in &self.plan {
            let (j, m) = (op.j, op.mask);
            let stored = self.window[op.col + w];
            let v = match op.rule {
                Rule::PrevSelf => {
                    let v = delta::decode_masked(stored, self.last[j], m);
                    if v != 0 {
                        self.last[j] = v;
                    }
                    v
                }
                Rule::Prev => delta::decode_masked(stored, self.last[j], m),
                Rule::Field(i) => delta::decode_masked(stored, values[i], m),
                Rule::Step { i, slot } => {
                    let step = &mut self.steps[slot * t + id];
                    let v = delta::decode_masked(stored, values[i].wrapping_add(*step) & m, m);
                    if v != 0 && values[i] != 0 {
                        *step = v.wrapping_sub(values[i]) & m;
                    }
                    v
                }
            };
            values[j] = v;
        }
        for &(j, i) in &self.prev_updates {
            let v = values[i];
            if v != 0 {
                self.last[j] = v;
            }
        }
        self.next += 1;
        Ok(id)
    }
}

/// A section stream read and checked up to its records: the kinds' columns, ready
/// to decode record by record.
pub(super) struct Sections<'a> {
    /// Each record's kind, when more than one kind is present.
    kind_column: Option<&'a [u8]>,
    /// Per activity kind, its index in `kinds` (`u8::MAX`: absent).
    slot_of: [u8; ActivityKind::SLOTS],
    pub(super) kinds: Vec<KindColumns<'a>>,
    pub(super) tail: &'a [u8],
    /// Records in all.
    pub(super) records: usize,
}

impl Sections<'_> {
    /// The index in `kinds` of record `record`'s kind, if the kind column names a kind
    /// of the table.
    #[inline]
    pub(super) fn kind_slot(&self, record: usize) -> Result<usize, CompactError> {
        let Some(column) = self.kind_column else {
            return Ok(0);
        };
        let kind = column[record];
        match self.slot_of.get(kind as usize) {
            Some(&s) if s != u8::MAX => Ok(s as usize),
            _ => {
                let problem = "is not in the kind table";
                Err(CompactError::KindColumn {
                    record,
                    kind,
                    problem,
                })
            }
        }
    }

    /// [`Sections::kind_slot`], if that kind also has records left to decode.
    #[inline]
    pub(super) fn slot(&self, record: usize) -> Result<usize, CompactError> {
        let slot = self.kind_slot(record)?;
        let k = &self.kinds[slot];
        if k.next == k.entry.records as usize {
            let (kind, problem) = (k.entry.kind, "has more records than the kind table counts");
            return Err(CompactError::KindColumn {
                record,
                kind,
                problem,
            });
        }
        Ok(slot)
    }
}

/// Read the section stream of the buffer `header` describes up to its records,
/// checking every count, length and template (the windows' buffers from `scratch`).
pub(super) fn sections<'a>(
    sections: &'a [u8],
    header: &CompactHeader,
    layout: &Layout,
    scratch: &mut JoinScratch,
) -> Result<Sections<'a>, CompactError> {
    let mut cur = Cursor::new(sections);
    let count = cur.u8("kind table")? as usize;
    if count == 0 || count > ActivityKind::SLOTS {
        let problem = format!("{count} kinds (1 to {})", ActivityKind::SLOTS);
        return Err(CompactError::KindTable { entry: 0, problem });
    }
    let mut entries: Vec<KindEntry> = Vec::with_capacity(count);
    for entry in 0..count {
        let e = KindEntry::read(&mut cur, entry, layout)?;
        if let Some(prev) = entries.last().filter(|p| p.kind >= e.kind) {
            let problem = format!(
                "kind {} after kind {} (ascending, once each)",
                e.kind, prev.kind
            );
            return Err(CompactError::KindTable { entry, problem });
        }
        entries.push(e);
    }
    check_lengths(&entries, header)?;
    let n = header.record_count as usize;
    let kind_column = if count > 1 {
        Some(cur.take(n as u64, "kind column")?)
    } else {
        None
    };
    let mut kinds = Vec::with_capacity(count);
    for entry in entries {
        let records = entry.records as usize;
        let ids_len = u64::from(entry.id_width) * records as u64;
        let ids = SplitColumn::new(cur.take(ids_len, "template ids")?, records, entry.id_width);
        let mut deltas = Vec::with_capacity(entry.fields.len());
        for f in &entry.fields {
            let bytes = cur.take(u64::from(f.width) * records as u64, "delta column")?;
            deltas.push(SplitColumn::new(bytes, records, f.width));
        }
        let window = scratch.take((entry.fields.len() + 1) * WINDOW);
        let mut last = [0; MAX_DELTA_FIELDS];
        for (l, f) in last.iter_mut().zip(&entry.fields) {
            *l = f.seed;
        }
        kinds.push(KindColumns {
            ids,
            deltas,
            window,
            window_start: 0,
            window_end: 0,
            shapes: Vec::new(),
            next: 0,
            last,
            steps: Vec::new(),
            plan: Vec::new(),
            prev_updates: Vec::new(),
            values: [0; MAX_DELTA_FIELDS],
            entry,
        });
    }
    for k in &mut kinds {
        read_templates(&mut cur, k)?;
    }
    let tail = cur.take(header.tail_len.into(), "tail")?;
    if cur.remaining() != 0 {
        return Err(CompactError::Lengths {
            what: "section stream lengths",
            expected: cur.position() as u64,
            actual: sections.len() as u64,
        });
    }
    let mut slot_of = [u8::MAX; ActivityKind::SLOTS];
    for (i, k) in kinds.iter().enumerate() {
        slot_of[k.entry.kind as usize] = i as u8;
    }
    Ok(Sections {
        kind_column,
        slot_of,
        kinds,
        tail,
        records: n,
    })
}

/// Rebuild the buffer described by `header` from `sections` into `out` (cleared first).
pub(crate) fn join(
    sections: &[u8],
    header: &CompactHeader,
    layout: &Layout,
    scratch: &mut JoinScratch,
    out: &mut Vec<u8>,
) -> Result<(), CompactError> {
    let mut s = self::sections(sections, header, layout, scratch)?;
    out.clear();
    out.reserve_exact(header.decompressed_len as usize);
    for record in 0..s.records {
        let slot = s.slot(record)?;
        rebuild(&mut s.kinds[slot], out)?;
    }
    out.extend_from_slice(s.tail);
    scratch.give_back(s.kinds);
    Ok(())
}

/// The kind table's counts against the header: records, and the bytes they rebuild.
fn check_lengths(entries: &[KindEntry], header: &CompactHeader) -> Result<(), CompactError> {
    let records: u64 = entries.iter().map(|e| u64::from(e.records)).sum();
    if records != u64::from(header.record_count) {
        return Err(CompactError::Lengths {
            what: "record counts",
            expected: header.record_count.into(),
            actual: records,
        });
    }
    let bytes: u64 = entries
        .iter()
        .map(|e| u64::from(e.records) * u64::from(e.unit))
        .sum::<u64>()
        + u64::from(header.tail_len);
    if bytes != u64::from(header.decompressed_len) {
        return Err(CompactError::Lengths {
            what: "buffer lengths (records and tail)",
            expected: header.decompressed_len.into(),
            actual: bytes,
        });
    }
    Ok(())
}

/// Read a kind's column-major templates into row-major shapes; each must start with
/// its kind. The shapes are at most `records * unit` bytes, within the checked length.
fn read_templates(cur: &mut Cursor<'_>, k: &mut KindColumns<'_>) -> Result<(), CompactError> {
    let e = &k.entry;
    let (t, unit) = (e.templates as usize, e.unit as usize);
    let kept = e.kept_offsets();
    let bytes = cur.take(kept.len() as u64 * t as u64, "templates")?;
    k.shapes = vec![0u8; t * unit];
    for (column, &o) in bytes.chunks_exact(t).zip(&kept) {
        for (shape, &b) in k.shapes.chunks_exact_mut(unit).zip(column) {
            shape[o as usize] = b;
        }
    }
    for (template, shape) in k.shapes.chunks_exact(unit).enumerate() {
        let found = u32::from_le_bytes([shape[0], shape[1], shape[2], shape[3]]);
        if found != u32::from(e.kind) {
            let (kind, template) = (e.kind, template as u32);
            return Err(CompactError::TemplateKind {
                kind,
                template,
                found,
            });
        }
    }
    let mut slots = 0;
    for (j, f) in e.fields.iter().enumerate() {
        // A field stored in no bytes is zero in every record: the template already
        // holds the zero, and a zero value updates no prediction.
        if f.width == 0 {
            continue;
        }
        let rule = match f.predictor {
            Predictor::Prev(i) if i as usize == j => Rule::PrevSelf,
            Predictor::Prev(i) => {
                k.prev_updates.push((j, i as usize));
                Rule::Prev
            }
            Predictor::Field(i) => Rule::Field(i as usize),
            Predictor::TemplateStep(i) => {
                slots += 1;
                Rule::Step {
                    i: i as usize,
                    slot: slots - 1,
                }
            }
        };
        let (offset, size) = (f.offset as usize, f.size);
        let mask = delta::mask(size);
        k.plan.push(FieldOp {
            j,
            col: (j + 1) * WINDOW,
            offset,
            size,
            mask,
            rule,
        });
    }
    k.steps = vec![0u64; slots * t];
    Ok(())
}

/// `v`'s low `size` (4 or 8) bytes at `offset` of `rec`: fixed-size copies (a copy of
/// a length known only at run time is a `memmove` call).
#[inline(always)]
fn put(rec: &mut [u8], offset: usize, size: u8, v: u64) {
    // The kind table admits only these two (`KindEntry::read`).
    if size == 8 {
        rec[offset..offset + 8].copy_from_slice(&v.to_le_bytes());
    } else {
        rec[offset..offset + 4].copy_from_slice(&(v as u32).to_le_bytes());
    }
}

/// Append the kind's next record: its template with its delta fields set.
#[inline]
fn rebuild(k: &mut KindColumns<'_>, out: &mut Vec<u8>) -> Result<(), CompactError> {
    let id = k.advance()?;
    let unit = k.entry.unit as usize;
    let start = out.len();
    out.extend_from_slice(&k.shapes[id * unit..][..unit]);
    let rec = &mut out[start..];
    for op in &k.plan {
        put(rec, op.offset, op.size, k.values[op.j]);
    }
    Ok(())
}
