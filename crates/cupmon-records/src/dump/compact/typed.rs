//! A frame's records straight from its columns, for a walk of the dump: each template
//! decoded into a typed record once, then per record its delta fields set on that
//! record, with no buffer rebuilt and nothing parsed. The records are those the
//! rebuilt buffer decodes to: a template is a record with its delta fields zeroed, and
//! a delta field is one field of the record (or bytes no field reads), so decoding the
//! rebuilt bytes gives the template's fields with the delta fields' values.
//!
//! Where that cannot be shown for a frame (a delta field that is part of a field or
//! spans two, a template the decoder refuses, bytes after the last record, an id or a
//! kind column out of range), [`prepare`] declines and the caller rebuilds the bytes,
//! which also gives the error message a damaged frame deserves.

use super::error::CompactError;
use super::header::CompactHeader;
use super::join::{self, JoinScratch, KindColumns, Sections};
use crate::kinds::{self, family_of, since, Record};
use crate::{ActivityKind, Layout};

/// The records of one frame, given in buffer order by [`FrameRecords::each`].
pub struct FrameRecords<'a> {
    sections: Sections<'a>,
    /// Per kind of `sections.kinds`, its templates as records and its setters.
    kinds: Vec<TypedKind>,
    /// The activity buffer's bytes.
    len: usize,
}

impl std::fmt::Debug for FrameRecords<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameRecords")
            .field("records", &self.sections.records)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

struct TypedKind {
    /// Template `t` decoded; record by record, its delta fields are overwritten.
    templates: Vec<Record>,
    /// `(delta field index, byte offset of the record field it is)`, for the delta
    /// fields stored in the columns that a field of the record reads.
    setters: Vec<(usize, usize)>,
}

impl FrameRecords<'_> {
    /// The activity buffer's length in bytes (what the rebuilt buffer would hold).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Call `f(offset in the buffer, record)` for every record, in buffer order. The
    /// frame was checked by [`prepare`]: an error here means a check is missing there.
    pub fn each(mut self, mut f: impl FnMut(usize, &Record)) -> Result<(), CompactError> {
        let mut offset = 0;
        for record in 0..self.sections.records {
            let slot = self.sections.slot(record)?;
            let k = &mut self.sections.kinds[slot];
            let id = k.advance()?;
            let typed = &mut self.kinds[slot];
            let rec = &mut typed.templates[id];
            rec.set_fields(&typed.setters, &k.values);
            f(offset, rec);
            offset += k.entry.unit as usize;
        }
        Ok(())
    }
}

/// The frame's records without rebuilding its bytes, if that gives the records the
/// bytes would (see the module docs); `Ok(None)` where the bytes must be rebuilt.
/// The errors are those [`join::join`] gives for the same frame.
pub(super) fn prepare<'a>(
    sections: &'a [u8],
    header: &CompactHeader,
    layout: &Layout,
) -> Result<Option<FrameRecords<'a>>, CompactError> {
    // Bytes after the last record are decoded as records by a walk of the bytes
    // (an error, or records the layout did not split off): rare, left to the bytes.
    if header.tail_len != 0 {
        return Ok(None);
    }
    let sections = join::sections(sections, header, layout, &mut JoinScratch::default())?;
    if !in_range(&sections) {
        return Ok(None);
    }
    let mut kinds = Vec::with_capacity(sections.kinds.len());
    for k in &sections.kinds {
        match typed_kind(k, layout) {
            Some(t) => kinds.push(t),
            None => return Ok(None),
        }
    }
    Ok(Some(FrameRecords {
        sections,
        kinds,
        len: header.decompressed_len as usize,
    }))
}

/// Whether every record's kind and template id are in range: then no record fails
/// halfway through a walk that has already given the records before it.
fn in_range(s: &Sections<'_>) -> bool {
    let mut left: Vec<u64> = s.kinds.iter().map(|k| u64::from(k.entry.records)).collect();
    for record in 0..s.records {
        let Ok(slot) = s.kind_slot(record) else {
            return false;
        };
        match left.get_mut(slot) {
            Some(n) if *n > 0 => *n -= 1,
            _ => return false,
        }
    }
    s.kinds.iter().all(KindColumns::ids_in_range)
}

/// The kind's templates decoded and its delta fields matched to the record's fields.
fn typed_kind(k: &KindColumns<'_>, layout: &Layout) -> Option<TypedKind> {
    let kind = ActivityKind(u32::from(k.entry.kind));
    let size = layout.record_size(kind.as_u32())?;
    let api = layout.version().api();
    let spec = family_of(kind)?;
    // The fields a decode of this version's records reads (what `Scalar::read` finds
    // inside the record).
    let read = |f: &&kinds::Field| since(api, f.since_api) && f.offset + f.size <= size;
    let mut setters = Vec::with_capacity(k.plan.len());
    for op in &k.plan {
        let (o, s) = (op.offset, usize::from(op.size));
        let mut overlapping = spec
            .fields
            .iter()
            .filter(read)
            .filter(|f| f.offset < o + s && o < f.offset + f.size);
        match (overlapping.next(), overlapping.next()) {
            (None, _) => {}
            (Some(f), None) if f.offset == o && f.size == s => setters.push((op.j, o)),
            _ => return None,
        }
    }
    let unit = k.entry.unit as usize;
    let templates = k
        .shapes
        .chunks_exact(unit)
        .map(|t| kinds::decode(kind, t.get(..size)?, api).flatten())
        .collect::<Option<Vec<Record>>>()?;
    Some(TypedKind { templates, setters })
}
