//! Little-endian field access over byte slices: no pointer casts, no `unsafe`, and no
//! panics. Reads from a fixed-size array at constant offsets compile to plain loads (the
//! bounds are checked at compile time); reads of trailing fields that older CUPTI
//! versions lack go through `get` and yield 0 when the record is too short.

#[inline(always)]
pub(crate) fn u8_at<const N: usize>(b: &[u8; N], o: usize) -> u8 {
    b[o]
}

#[inline(always)]
pub(crate) fn u16_at<const N: usize>(b: &[u8; N], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

#[inline(always)]
pub(crate) fn u32_at<const N: usize>(b: &[u8; N], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

#[inline(always)]
pub(crate) fn i32_at<const N: usize>(b: &[u8; N], o: usize) -> i32 {
    u32_at(b, o) as i32
}

#[inline(always)]
pub(crate) fn u64_at<const N: usize>(b: &[u8; N], o: usize) -> u64 {
    u64::from_le_bytes([
        b[o],
        b[o + 1],
        b[o + 2],
        b[o + 3],
        b[o + 4],
        b[o + 5],
        b[o + 6],
        b[o + 7],
    ])
}

/// A trailing `u8` field: 0 when the record ends before it.
#[inline(always)]
pub(crate) fn opt_u8(b: &[u8], o: usize) -> u8 {
    b.get(o).copied().unwrap_or(0)
}

/// A trailing `u32` field: 0 when the record ends before it.
#[inline(always)]
pub(crate) fn opt_u32(b: &[u8], o: usize) -> u32 {
    match b.get(o..o + 4) {
        Some(&[a, b1, c, d]) => u32::from_le_bytes([a, b1, c, d]),
        _ => 0,
    }
}

/// A trailing `u64` field: 0 when the record ends before it.
#[inline(always)]
pub(crate) fn opt_u64(b: &[u8], o: usize) -> u64 {
    match b.get(o..o + 8) {
        Some(s) => {
            let mut x = [0u8; 8];
            x.copy_from_slice(s);
            u64::from_le_bytes(x)
        }
        None => 0,
    }
}

/// Writes `value`'s little-endian bytes at `o` if they fit in `b` (the field exists in
/// the target layout); otherwise the field is dropped, as an older CUPTI would.
#[inline]
pub(crate) fn put(b: &mut [u8], o: usize, value: &[u8]) {
    if let Some(dst) = b.get_mut(o..o + value.len()) {
        dst.copy_from_slice(value);
    }
}
