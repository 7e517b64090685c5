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

/// One kind's columns within the section stream, and its decoding state.
struct KindColumns<'a> {
    entry: KindEntry,
    ids: SplitColumn<'a>,
    deltas: Vec<SplitColumn<'a>>,
    /// Row-major templates (`templates * unit` bytes, delta fields zero).
    shapes: Vec<u8>,
    /// Records of this kind rebuilt so far.
    next: usize,
    /// Per delta field: the last non-zero value of the field its `Prev` predictor names.
    last: [u64; MAX_DELTA_FIELDS],
    /// Per delta field with a `TemplateStep` predictor: the last step per template.
    steps: Vec<Vec<u64>>,
}

/// Rebuild the buffer described by `header` from `sections` into `out` (cleared first).
pub(crate) fn join(
    sections: &[u8],
    header: &CompactHeader,
    layout: &Layout,
    out: &mut Vec<u8>,
) -> Result<(), CompactError> {
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
        let mut last = [0; MAX_DELTA_FIELDS];
        for (l, f) in last.iter_mut().zip(&entry.fields) {
            *l = f.seed;
        }
        kinds.push(KindColumns {
            ids,
            deltas,
            shapes: Vec::new(),
            next: 0,
            last,
            steps: Vec::new(),
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
    out.clear();
    out.reserve_exact(header.decompressed_len as usize);
    for record in 0..n {
        let slot = match kind_column {
            None => 0,
            Some(column) => {
                let kind = column[record];
                match slot_of.get(kind as usize) {
                    Some(&s) if s != u8::MAX => s as usize,
                    _ => {
                        let problem = "is not in the kind table";
                        return Err(CompactError::KindColumn {
                            record,
                            kind,
                            problem,
                        });
                    }
                }
            }
        };
        let k = &mut kinds[slot];
        if k.next == k.entry.records as usize {
            let (kind, problem) = (k.entry.kind, "has more records than the kind table counts");
            return Err(CompactError::KindColumn {
                record,
                kind,
                problem,
            });
        }
        rebuild(k, out)?;
    }
    out.extend_from_slice(tail);
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
    k.steps = e
        .fields
        .iter()
        .map(|f| match f.predictor {
            Predictor::TemplateStep(_) => vec![0u64; t],
            _ => Vec::new(),
        })
        .collect();
    Ok(())
}

/// Append the kind's next record: its template, then each delta field from its
/// prediction (the rules `split.rs` replays).
#[inline]
fn rebuild(k: &mut KindColumns<'_>, out: &mut Vec<u8>) -> Result<(), CompactError> {
    let r = k.next;
    let e = &k.entry;
    let id = e.template_of(r, k.ids.get(r)) as u32;
    if id >= e.templates {
        let (kind, templates) = (e.kind, e.templates);
        return Err(CompactError::TemplateId {
            kind,
            record: r,
            id,
            templates,
        });
    }
    let unit = e.unit as usize;
    let start = out.len();
    out.extend_from_slice(&k.shapes[id as usize * unit..][..unit]);
    let rec = &mut out[start..];
    let mut values = [0u64; MAX_DELTA_FIELDS];
    for (j, f) in e.fields.iter().enumerate() {
        let m = delta::mask(f.size);
        let pred = match f.predictor {
            Predictor::Prev(_) => k.last[j],
            Predictor::Field(i) => values[i as usize],
            Predictor::TemplateStep(i) => {
                values[i as usize].wrapping_add(k.steps[j][id as usize]) & m
            }
        };
        let v = delta::decode(k.deltas[j].get(r), pred, f.size);
        values[j] = v;
        let o = f.offset as usize;
        rec[o..o + f.size as usize].copy_from_slice(&v.to_le_bytes()[..f.size as usize]);
    }
    for (j, f) in e.fields.iter().enumerate() {
        match f.predictor {
            Predictor::Prev(i) if values[i as usize] != 0 => k.last[j] = values[i as usize],
            Predictor::TemplateStep(i) if values[j] != 0 && values[i as usize] != 0 => {
                k.steps[j][id as usize] =
                    values[j].wrapping_sub(values[i as usize]) & delta::mask(f.size);
            }
            _ => {}
        }
    }
    k.next += 1;
    Ok(())
}
