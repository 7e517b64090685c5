//! The encoder's half of the columns transform: splits an activity buffer into the kind
//! column and, per kind, template ids, delta columns and templates (see the module docs
//! of `compact` for the layout), choosing each delta field's predictor on the chunk's
//! own records.

use rustc_hash::FxHashMap;

use super::columns::{put_split, put_split_u32};
use super::delta::{self, Predictor};
use super::table::{delta_candidates, id_width_for, unit_of, DeltaField, KindEntry};
use crate::{ActivityKind, Layout};

/// Records of a kind that predictors are tried on, spread evenly over the chunk: an
/// eighth of them, at least 256 (or all), at most 2048.
const SAMPLE: (usize, usize) = (256, 2048);

/// Kinds with fewer records than this use the fixed predictors: choosing costs more
/// than it can save on them.
const ADAPT_MIN: usize = 64;

/// No earlier record (in `Splitter::prev_same`).
const NONE: u32 = u32::MAX;

/// What the split found: the section stream is in the caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SplitCounts {
    pub records: u32,
    pub tail: u32,
}

/// Which parts of the transform to use. All on is the format's point; the others exist
/// so that `bench/compact` can measure what each part is worth (every combination
/// writes valid chunks that the one decoder reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactOptions {
    /// Timestamps and counters as deltas (off: they stay in the templates).
    pub deltas: bool,
    /// One template per distinct record shape (off: one per record, i.e. a plain
    /// column-major transposition of the records).
    pub templates: bool,
    /// Each delta field's predictor chosen on the chunk (off: the previous record's
    /// value for the first timestamp and the counters, the first timestamp for the others).
    pub adaptive: bool,
}

impl Default for CompactOptions {
    fn default() -> Self {
        Self {
            deltas: true,
            templates: true,
            adaptive: true,
        }
    }
}

/// Scratch buffers reused from chunk to chunk.
#[derive(Debug, Default)]
pub(crate) struct Splitter {
    options: CompactOptions,
    kinds: Vec<u8>,
    offsets: Vec<Vec<u32>>,
    templates: FxHashMap<Box<[u8]>, u32>,
    arena: Vec<u8>,
    ids: Vec<u32>,
    prev_same: Vec<u32>,
    values: Vec<Vec<u64>>,
    stored: Vec<u64>,
    columns: Vec<u8>,
    shapes: Vec<u8>,
    /// Tests: pick each field's predictor among the candidates by this rule instead.
    #[cfg(test)]
    pub(crate) force: Option<fn(&[Predictor]) -> Predictor>,
}

#[inline(always)]
pub(crate) fn read_le(rec: &[u8], offset: usize, size: u8) -> u64 {
    let mut b = [0u8; 8];
    b[..size as usize].copy_from_slice(&rec[offset..offset + size as usize]);
    u64::from_le_bytes(b)
}

impl Splitter {
    pub(crate) fn new(options: CompactOptions) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }

    /// Write the section stream of `data` into `out` (cleared first). `None` when no
    /// record can be split off (the caller stores the buffer raw).
    pub(crate) fn split(
        &mut self,
        data: &[u8],
        layout: &Layout,
        out: &mut Vec<u8>,
    ) -> Option<SplitCounts> {
        let end = self.find_records(data, layout);
        let n = self.kinds.len();
        if n == 0 {
            return None;
        }
        self.columns.clear();
        self.shapes.clear();
        let mut table = Vec::with_capacity(128);
        let present: Vec<u8> = (0..ActivityKind::SLOTS as u8)
            .filter(|&k| !self.offsets[k as usize].is_empty())
            .collect();
        table.push(present.len() as u8);
        for &kind in &present {
            self.split_kind(data, layout, kind).write(&mut table);
        }
        out.clear();
        out.reserve(table.len() + n + self.columns.len() + self.shapes.len() + data.len() - end);
        out.extend_from_slice(&table);
        if present.len() > 1 {
            out.extend_from_slice(&self.kinds);
        }
        out.extend_from_slice(&self.columns);
        out.extend_from_slice(&self.shapes);
        out.extend_from_slice(&data[end..]);
        Some(SplitCounts {
            records: n as u32,
            tail: (data.len() - end) as u32,
        })
    }

    /// Walk the buffer's records (the decoder's rules: an unknown kind or a record
    /// running past the end stops the walk); returns where the verbatim tail starts.
    fn find_records(&mut self, data: &[u8], layout: &Layout) -> usize {
        self.kinds.clear();
        self.offsets.resize_with(ActivityKind::SLOTS, Vec::new);
        self.offsets.iter_mut().for_each(Vec::clear);
        let mut pos = 0;
        while let Some(&[a, b, c, d]) = data.get(pos..pos + 4) {
            let kind = u32::from_le_bytes([a, b, c, d]);
            let Some(unit) = unit_of(layout, kind) else {
                break;
            };
            if kind as usize >= ActivityKind::SLOTS || data.len() - pos < unit {
                break;
            }
            self.kinds.push(kind as u8);
            self.offsets[kind as usize].push(pos as u32);
            pos += unit;
        }
        pos
    }

    /// Templates, ids and delta columns of one kind; appends its columns and templates.
    fn split_kind(&mut self, data: &[u8], layout: &Layout, kind: u8) -> KindEntry {
        let unit = unit_of(layout, u32::from(kind)).unwrap_or(0);
        let mut fields = delta_candidates(layout, kind);
        if !self.options.deltas {
            fields.clear();
        }
        let offsets = &self.offsets[kind as usize];
        let n = offsets.len();
        self.templates.clear();
        self.arena.clear();
        self.ids.clear();
        self.values.resize_with(fields.len(), Vec::new);
        self.values.iter_mut().for_each(Vec::clear);
        let mut shape = vec![0u8; unit];
        for &off in offsets {
            let rec = &data[off as usize..off as usize + unit];
            shape.copy_from_slice(rec);
            for (f, values) in fields.iter().zip(&mut self.values) {
                let (o, s) = (f.offset as usize, f.size as usize);
                values.push(read_le(rec, o, f.size));
                shape[o..o + s].fill(0);
            }
            let known = self
                .options
                .templates
                .then(|| self.templates.get(&shape[..]));
            let id = match known.flatten() {
                Some(&id) => id,
                None => {
                    let id = (self.arena.len() / unit.max(1)) as u32;
                    if self.options.templates {
                        self.templates.insert(shape.clone().into_boxed_slice(), id);
                    }
                    self.arena.extend_from_slice(&shape);
                    id
                }
            };
            self.ids.push(id);
        }
        let templates = (self.arena.len() / unit.max(1)) as u32;
        // Every record its own template: the ids are implicit.
        let id_width = if templates as usize == n {
            0
        } else {
            id_width_for(templates)
        };
        put_split_u32(&mut self.columns, &self.ids, id_width);
        let adaptive = self.options.adaptive && n >= ADAPT_MIN;
        if adaptive {
            // For the predictors' estimates: each record's last one with its template.
            let mut seen = vec![NONE; templates as usize];
            self.prev_same.clear();
            self.prev_same.extend(
                self.ids
                    .iter()
                    .enumerate()
                    .map(|(r, &t)| std::mem::replace(&mut seen[t as usize], r as u32)),
            );
        }
        for j in 0..fields.len() {
            #[cfg(test)]
            let forced = self.force.map(|pick| pick(&candidates(&fields, j)));
            #[cfg(not(test))]
            let forced = None;
            let predictor = if let Some(p) = forced {
                p
            } else if adaptive {
                best_predictor(&fields, j, &self.values, &self.prev_same)
            } else if fields[j].timestamp && j > 0 {
                Predictor::Field(0)
            } else {
                Predictor::Prev(j as u8)
            };
            fields[j].predictor = predictor;
            fields[j].seed = seed_for(predictor, &self.values);
            self.stored.clear();
            let f = fields[j];
            residuals(&f, j, &self.values, &self.ids, templates, n, |e| {
                self.stored.push(e)
            });
            fields[j].width = delta::width_of(self.stored.iter().copied().max().unwrap_or(0));
            put_split(&mut self.columns, &self.stored, fields[j].width);
        }
        let entry = KindEntry {
            kind,
            unit: unit as u16,
            records: n as u32,
            templates,
            id_width,
            fields,
        };
        // Templates column-major: byte `o` of every template, for each kept offset.
        for o in entry.kept_offsets() {
            let o = o as usize;
            self.shapes
                .extend(self.arena.chunks_exact(unit).map(|template| template[o]));
        }
        entry
    }
}

/// The predictors worth trying for field `j`: its own previous value first (ties keep
/// it), for timestamps also the other timestamps of the previous record and of this one.
fn candidates(fields: &[DeltaField], j: usize) -> Vec<Predictor> {
    let f = fields[j];
    let mut c = vec![Predictor::Prev(j as u8)];
    for (i, g) in fields.iter().enumerate() {
        if g.size != f.size || g.timestamp != f.timestamp || i == j {
            continue;
        }
        if f.timestamp {
            c.push(Predictor::Prev(i as u8));
        }
        if i < j {
            c.push(Predictor::Field(i as u8));
            if f.timestamp {
                c.push(Predictor::TemplateStep(i as u8));
            }
        }
    }
    c
}

/// The candidate whose stored values cost the fewest bits over a sample spread over the
/// chunk, as the order-0 entropy of each byte column (what the compressor's literal
/// coding approaches on split columns; a plain count of significant bits favours
/// differences of noise, which are wider than the noise). The estimate predicts from
/// the previous record and the previous record with the same template (`prev_same`),
/// as the encoder does except for records whose base is 0.
fn best_predictor(
    fields: &[DeltaField],
    j: usize,
    values: &[Vec<u64>],
    prev_same: &[u32],
) -> Predictor {
    let n = values[j].len();
    let step = n.div_ceil((n / 8).clamp(SAMPLE.0, SAMPLE.1)).max(1);
    let (own, size, m) = (&values[j], fields[j].size, delta::mask(fields[j].size));
    let mut best = (f64::MAX, Predictor::Prev(j as u8));
    let mut stored = Vec::with_capacity(SAMPLE.1);
    for p in candidates(fields, j) {
        stored.clear();
        let base = &values[p.arg()];
        for r in (0..n).step_by(step) {
            let pred = match p {
                Predictor::Prev(_) => base[r.saturating_sub(1)],
                Predictor::Field(_) => base[r],
                Predictor::TemplateStep(_) => match prev_same[r] {
                    NONE => base[r],
                    q => base[r].wrapping_add(own[q as usize].wrapping_sub(base[q as usize])) & m,
                },
            };
            stored.push(delta::encode(own[r], pred, size));
        }
        let cost = split_entropy(&stored);
        if cost < best.0 {
            best = (cost, p);
        }
    }
    best.1
}

/// Where a `Prev` predictor starts: the first non-zero value of the field it names.
fn seed_for(p: Predictor, values: &[Vec<u64>]) -> u64 {
    match p {
        Predictor::Prev(i) => values[i as usize]
            .iter()
            .copied()
            .find(|&v| v != 0)
            .unwrap_or(0),
        _ => 0,
    }
}

/// Bits to code `values` as byte-split columns, each column at its order-0 entropy.
fn split_entropy(values: &[u64]) -> f64 {
    let width = delta::width_of(values.iter().copied().max().unwrap_or(0));
    let n = values.len() as f64;
    let mut total = 0.0;
    let mut counts = [0u32; 256];
    for b in 0..u32::from(width) {
        counts.fill(0);
        for v in values {
            counts[(v >> (8 * b)) as u8 as usize] += 1;
        }
        let sum: f64 = counts
            .iter()
            .filter(|&&c| c > 0)
            .map(|&c| f64::from(c) * f64::from(c).log2())
            .sum();
        total += n * n.log2() - sum;
    }
    total
}

/// The stored values of field `j` (described by `f`) for the first `n` records, in order:
/// the decoder's prediction rules (`join.rs`) replayed on the raw values.
fn residuals(
    f: &DeltaField,
    j: usize,
    values: &[Vec<u64>],
    ids: &[u32],
    templates: u32,
    n: usize,
    mut sink: impl FnMut(u64),
) {
    let (own, size, m) = (&values[j], f.size, delta::mask(f.size));
    match f.predictor {
        Predictor::Prev(i) => {
            let base = &values[i as usize];
            let mut last = f.seed;
            for r in 0..n {
                sink(delta::encode(own[r], last, size));
                if base[r] != 0 {
                    last = base[r];
                }
            }
        }
        Predictor::Field(i) => {
            let base = &values[i as usize];
            for r in 0..n {
                sink(delta::encode(own[r], base[r], size));
            }
        }
        Predictor::TemplateStep(i) => {
            let base = &values[i as usize];
            let mut step = vec![0u64; templates as usize];
            for r in 0..n {
                let t = ids[r] as usize;
                sink(delta::encode(
                    own[r],
                    base[r].wrapping_add(step[t]) & m,
                    size,
                ));
                if own[r] != 0 && base[r] != 0 {
                    step[t] = own[r].wrapping_sub(base[r]) & m;
                }
            }
        }
    }
}
