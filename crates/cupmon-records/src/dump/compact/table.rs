//! The kind table at the start of the section stream: for each record kind present, its
//! record size, counts, and the delta fields with their predictors. The decoder needs
//! nothing else to rebuild the records (the layout only cross-checks the sizes), so a
//! later cupmon that changes which fields it predicts still reads old chunks.

use super::columns::Cursor;
use super::delta::Predictor;
use super::error::CompactError;
use crate::kinds::family_of;
use crate::{ActivityKind, Layout};

/// At most this many delta fields per kind (kernels use 7).
pub(crate) const MAX_DELTA_FIELDS: usize = 16;

/// Counter fields (by the record type's field name) stored as deltas like timestamps:
/// they grow by small steps from record to record.
const COUNTERS: [&str; 5] = [
    "correlation_id",
    "runtime_correlation_id",
    "grid_id",
    "external_id",
    "cuda_event_sync_id",
];

/// One delta field of a kind: where it is and how it is predicted and stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DeltaField {
    pub offset: u16,
    /// 4 or 8 bytes.
    pub size: u8,
    /// Bytes stored per value (0 when every stored value is 0).
    pub width: u8,
    pub predictor: Predictor,
    /// The value a `Prev` predictor starts from (the first record's base), so that the
    /// first record's delta is small too.
    pub seed: u64,
    /// A timestamp (predictable from other timestamps) rather than a counter; the
    /// encoder's business, not stored.
    pub timestamp: bool,
}

/// One kind's entry of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KindEntry {
    pub kind: u8,
    /// Bytes per record in the buffer: the struct size rounded up to 8.
    pub unit: u16,
    pub records: u32,
    pub templates: u32,
    /// Bytes per template id; 0: no id column, record `i` uses template `i` when there
    /// are as many templates as records (every record distinct), else template 0.
    pub id_width: u8,
    pub fields: Vec<DeltaField>,
}

/// Bytes per template id for `templates` distinct templates.
pub(crate) fn id_width_for(templates: u32) -> u8 {
    match templates {
        0..=1 => 0,
        2..=0x100 => 1,
        0x101..=0x1_0000 => 2,
        0x1_0001..=0x100_0000 => 3,
        _ => 4,
    }
}

/// The bytes a record of `kind` occupies in a buffer of `layout`.
pub(crate) fn unit_of(layout: &Layout, kind: u32) -> Option<usize> {
    layout.record_size(kind).map(|s| (s + 7) & !7)
}

/// The delta fields of `kind` in `layout` (predictors still to be chosen): the spec's
/// timestamps, then the counters, in offset order within each group.
pub(crate) fn delta_candidates(layout: &Layout, kind: u8) -> Vec<DeltaField> {
    let kind = ActivityKind(u32::from(kind));
    let (Some(spec), Some(size)) = (family_of(kind), layout.record_size(kind.0)) else {
        return Vec::new();
    };
    let field = |offset: usize, size: usize, timestamp| DeltaField {
        offset: offset as u16,
        size: size as u8,
        width: 0,
        predictor: Predictor::Prev(0),
        seed: 0,
        timestamp,
    };
    let mut fields: Vec<DeltaField> = spec
        .timestamps
        .iter()
        .filter(|&&o| o >= 4 && o + 8 <= size)
        .map(|&o| field(o, 8, true))
        .collect();
    let mut counters: Vec<DeltaField> = layout
        .fields(kind)
        .filter(|f| COUNTERS.contains(&f.name) && (f.size == 4 || f.size == 8))
        .filter(|f| f.offset >= 4 && f.offset + f.size <= size)
        .map(|f| field(f.offset, f.size, false))
        .collect();
    counters.sort_by_key(|f| f.offset);
    fields.extend(counters);
    fields.truncate(MAX_DELTA_FIELDS);
    fields
}

impl KindEntry {
    /// The template of the kind's record `r` whose id column holds `stored`.
    #[inline(always)]
    pub(crate) fn template_of(&self, r: usize, stored: u64) -> u64 {
        if self.id_width == 0 && self.templates > 1 {
            r as u64
        } else {
            stored
        }
    }

    /// Offsets within the record of the template's bytes, in order.
    pub(crate) fn kept_offsets(&self) -> Vec<u16> {
        let mut delta = vec![false; self.unit as usize];
        for f in &self.fields {
            delta[f.offset as usize..][..f.size as usize].fill(true);
        }
        (0..self.unit).filter(|&o| !delta[o as usize]).collect()
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.push(self.kind);
        out.extend_from_slice(&self.unit.to_le_bytes());
        out.extend_from_slice(&self.records.to_le_bytes());
        out.extend_from_slice(&self.templates.to_le_bytes());
        out.push(self.id_width);
        out.push(self.fields.len() as u8);
        for f in &self.fields {
            let (code, arg) = f.predictor.code();
            out.extend_from_slice(&f.offset.to_le_bytes());
            out.extend_from_slice(&[f.size, f.width, code, arg]);
            out.extend_from_slice(&f.seed.to_le_bytes());
        }
    }

    /// Entry `entry` of the table, checked against itself and `layout`.
    pub(crate) fn read(
        cur: &mut Cursor<'_>,
        entry: usize,
        layout: &Layout,
    ) -> Result<Self, CompactError> {
        const S: &str = "kind table";
        let bad = |problem: String| CompactError::KindTable { entry, problem };
        let kind = cur.u8(S)?;
        let unit = cur.u16(S)?;
        let records = cur.u32(S)?;
        let templates = cur.u32(S)?;
        let id_width = cur.u8(S)?;
        let count = cur.u8(S)? as usize;
        match unit_of(layout, u32::from(kind)) {
            Some(u) if u == unit as usize => {}
            Some(u) => {
                return Err(bad(format!(
                    "kind {kind} has {unit}-byte records, CUPTI {} writes {u}",
                    layout.version()
                )))
            }
            None => {
                return Err(bad(format!(
                    "kind {kind} is not a kind CUPTI {} records cupmon decodes",
                    layout.version()
                )))
            }
        }
        if records == 0 || templates == 0 || templates > records {
            return Err(bad(format!(
                "kind {kind}: {templates} templates for {records} records \
                 (need 1 <= templates <= records)"
            )));
        }
        let implicit = id_width == 0 && templates == records;
        if id_width > 4 || (id_width < id_width_for(templates) && !implicit) {
            return Err(bad(format!(
                "kind {kind}: {id_width}-byte template ids cannot number {templates} templates"
            )));
        }
        if count > MAX_DELTA_FIELDS {
            return Err(bad(format!(
                "kind {kind}: {count} delta fields, at most {MAX_DELTA_FIELDS}"
            )));
        }
        let mut fields = Vec::with_capacity(count);
        for _ in 0..count {
            let offset = cur.u16(S)?;
            let b = cur.take(12, S)?;
            let predictor = Predictor::from_code(b[2], b[3]);
            let field = DeltaField {
                offset,
                size: b[0],
                width: b[1],
                predictor: predictor.unwrap_or(Predictor::Prev(u8::MAX)),
                seed: u64::from_le_bytes([b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11]]),
                timestamp: false, // only the encoder's choice of candidates needs it
            };
            if predictor.is_none() {
                let problem = format!("unknown predictor {}", b[2]);
                return Err(CompactError::DeltaField {
                    kind,
                    field: fields.len(),
                    problem,
                });
            }
            fields.push(field);
        }
        let e = Self {
            kind,
            unit,
            records,
            templates,
            id_width,
            fields,
        };
        e.check_fields()?;
        Ok(e)
    }

    /// Fields inside the record past its kind, not overlapping, predicted by a field of
    /// their size (an earlier one within the record).
    fn check_fields(&self) -> Result<(), CompactError> {
        let kind = self.kind;
        for (j, f) in self.fields.iter().enumerate() {
            let bad = |problem: String| CompactError::DeltaField {
                kind,
                field: j,
                problem,
            };
            let (o, s) = (f.offset as usize, f.size as usize);
            if s != 4 && s != 8 {
                return Err(bad(format!("{s}-byte field (4 or 8)")));
            }
            if o < 4 || o + s > self.unit as usize {
                return Err(bad(format!(
                    "bytes {o}..{} outside 4..{}",
                    o + s,
                    self.unit
                )));
            }
            if f.seed > crate::dump::compact::delta::mask(f.size) {
                return Err(bad(format!("seed {:#x} wider than the field", f.seed)));
            }
            if f.width > f.size {
                return Err(bad(format!("{}-byte values of a {s}-byte field", f.width)));
            }
            let overlaps = |g: &DeltaField| {
                let (p, t) = (g.offset as usize, g.size as usize);
                o < p + t && p < o + s
            };
            if let Some(i) = self.fields[..j].iter().position(overlaps) {
                return Err(bad(format!("bytes {o}..{} overlap delta field {i}", o + s)));
            }
            let i = f.predictor.arg();
            let earlier = matches!(f.predictor, Predictor::Prev(_)) || i < j;
            match self.fields.get(i) {
                Some(g) if earlier && g.size == f.size => {}
                _ => return Err(bad(format!("predicted from field {i}: {:?}", f.predictor))),
            }
        }
        Ok(())
    }
}
