//! Delta fields: timestamps and counters stored as the difference to a prediction, so
//! that their columns hold small numbers. The mapping is a bijection for every input
//! (wrapping arithmetic), so arbitrary field values round-trip.

/// What a delta field's value is predicted from. `i` indexes the kind's delta fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Predictor {
    /// The last non-zero value of field `i` among the kind's earlier records (a
    /// counter vs its previous value, `start` vs the previous record's `start` or `end`).
    Prev(u8),
    /// Field `i` of the same record (`end` vs `start`, `completed` vs `end`); `i` comes
    /// earlier in the field list.
    Field(u8),
    /// Field `i` of the same record plus the difference the last record with the same
    /// template had (a kernel's duration repeats per launch configuration).
    TemplateStep(u8),
}

impl Predictor {
    pub(crate) fn code(self) -> (u8, u8) {
        match self {
            Self::Prev(i) => (0, i),
            Self::Field(i) => (1, i),
            Self::TemplateStep(i) => (2, i),
        }
    }

    pub(crate) fn from_code(code: u8, arg: u8) -> Option<Self> {
        match code {
            0 => Some(Self::Prev(arg)),
            1 => Some(Self::Field(arg)),
            2 => Some(Self::TemplateStep(arg)),
            _ => None,
        }
    }

    pub(crate) fn arg(self) -> usize {
        match self {
            Self::Prev(i) | Self::Field(i) | Self::TemplateStep(i) => i as usize,
        }
    }
}

/// All ones in the low `size` bytes (4 or 8).
#[inline(always)]
pub(crate) fn mask(size: u8) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * size as u32)) - 1
    }
}

/// Zigzag of the `size`-byte wrapping difference `v - pred`: small either way.
#[inline(always)]
fn zigzag(d: u64, size: u8) -> u64 {
    let bits = 8 * size as u32;
    let signed = ((d << (64 - bits)) as i64) >> (64 - bits); // sign-extend
    (((signed << 1) ^ (signed >> 63)) as u64) & mask(size)
}

#[inline(always)]
fn unzigzag(z: u64) -> u64 {
    (z >> 1) ^ (z & 1).wrapping_neg()
}

/// The stored value of `v` predicted by `pred`, both `size` bytes. Zero maps to zero
/// (an unset `queued`, a kernel still running, costs nothing whatever the prediction);
/// other values to `zigzag(v - pred) + 1`, except the one value whose image would wrap
/// to zero, which takes the image zero would have had: a bijection.
#[inline(always)]
pub(crate) fn encode(v: u64, pred: u64, size: u8) -> u64 {
    if v == 0 {
        return 0;
    }
    let m = mask(size);
    let z = zigzag(v.wrapping_sub(pred) & m, size).wrapping_add(1) & m;
    if z == 0 {
        zigzag(pred.wrapping_neg() & m, size).wrapping_add(1) & m
    } else {
        z
    }
}

/// Inverse of [`encode`].
#[cfg(test)]
pub(crate) fn decode(e: u64, pred: u64, size: u8) -> u64 {
    decode_masked(e, pred, mask(size))
}

/// [`decode`] for a field whose [`mask`] is `m` (the decoder's hot path: the mask
/// computed once per buffer, not per value).
#[inline(always)]
pub(crate) fn decode_masked(e: u64, pred: u64, m: u64) -> u64 {
    if e == 0 {
        return 0;
    }
    let v = pred.wrapping_add(unzigzag(e - 1) & m) & m;
    if v == 0 {
        // `e` is zero's image, taken by the value that maps to zigzag = all ones.
        pred.wrapping_add(unzigzag(m) & m) & m
    } else {
        v
    }
}

/// Bytes needed to store `max`, the largest value of a column.
pub(crate) fn width_of(max: u64) -> u8 {
    (64 - max.leading_zeros()).div_ceil(8) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_is_a_bijection_on_edge_values() {
        for size in [4u8, 8] {
            let m = mask(size);
            let edges = [0, 1, 2, m / 2, m / 2 + 1, m / 2 + 2, m - 1, m];
            for &pred in &edges {
                let mut seen = std::collections::HashSet::new();
                for &v in &edges {
                    let e = encode(v, pred, size);
                    assert!(e <= m, "size {size}: {v} vs {pred} -> {e}");
                    assert_eq!(decode(e, pred, size), v, "size {size}: {v} vs {pred}");
                    assert!(seen.insert(e), "size {size}: {e} twice");
                }
            }
        }
    }

    #[test]
    fn small_differences_give_small_values() {
        assert_eq!(encode(1000, 1000, 8), 1);
        assert_eq!(encode(1001, 1000, 8), 3);
        assert_eq!(encode(999, 1000, 8), 2);
        assert_eq!(encode(5, 7, 4), 4);
        assert_eq!(encode(0, 7, 4), 0);
    }
}
