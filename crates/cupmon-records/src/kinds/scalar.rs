//! Little-endian field access over byte slices: no pointer casts, no `unsafe`, no panics.
//! A field the record is too short for reads as zero (an older CUPTI's struct ends
//! before it) and is not written (the target struct has no room for it).

use crate::ActivityKind;

/// A fixed-size little-endian value at an offset of a record.
pub trait Scalar: Copy + Default {
    const SIZE: usize;
    fn read(b: &[u8], offset: usize) -> Self;
    fn write(self, b: &mut [u8], offset: usize);
    /// The value whose little-endian bytes are the low [`Scalar::SIZE`] bytes of `v`:
    /// what [`Scalar::read`] gives after those bytes were written at the offset.
    fn from_bits(v: u64) -> Self;
}

#[inline(always)]
fn bytes<const N: usize>(b: &[u8], offset: usize) -> Option<[u8; N]> {
    let s = b.get(offset..offset.checked_add(N)?)?;
    let mut a = [0u8; N];
    a.copy_from_slice(s);
    Some(a)
}

#[inline(always)]
fn put(b: &mut [u8], offset: usize, value: &[u8]) {
    if let Some(dst) = b.get_mut(offset..offset + value.len()) {
        dst.copy_from_slice(value);
    }
}

macro_rules! int_scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn read(b: &[u8], offset: usize) -> Self {
                bytes(b, offset).map_or(0, <$t>::from_le_bytes)
            }
            #[inline(always)]
            fn write(self, b: &mut [u8], offset: usize) {
                put(b, offset, &self.to_le_bytes());
            }
            #[inline(always)]
            fn from_bits(v: u64) -> Self {
                v as $t
            }
        }
    )*};
}

int_scalar!(u8, u16, u32, u64, i32, i64);

impl Scalar for ActivityKind {
    const SIZE: usize = 4;
    #[inline(always)]
    fn read(b: &[u8], offset: usize) -> Self {
        ActivityKind(u32::read(b, offset))
    }
    #[inline(always)]
    fn write(self, b: &mut [u8], offset: usize) {
        self.0.write(b, offset);
    }
    #[inline(always)]
    fn from_bits(v: u64) -> Self {
        ActivityKind(v as u32)
    }
}

/// A C `uint32_t[3]` (or a 12-byte union read as three words).
impl Scalar for [u32; 3] {
    const SIZE: usize = 12;
    #[inline(always)]
    fn read(b: &[u8], offset: usize) -> Self {
        [
            u32::read(b, offset),
            u32::read(b, offset + 4),
            u32::read(b, offset + 8),
        ]
    }
    #[inline(always)]
    fn write(self, b: &mut [u8], offset: usize) {
        for (i, w) in self.iter().enumerate() {
            w.write(b, offset + 4 * i);
        }
    }
    /// The first two words (a `u64` holds no more).
    #[inline(always)]
    fn from_bits(v: u64) -> Self {
        [v as u32, (v >> 32) as u32, 0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_records_read_zero_and_drop_writes() {
        let mut b = [0u8; 6];
        0x0102_0304u32.write(&mut b, 0);
        7u64.write(&mut b, 0); // does not fit: dropped
        assert_eq!(u32::read(&b, 0), 0x0102_0304);
        assert_eq!(u64::read(&b, 0), 0);
        assert_eq!(u32::read(&b, usize::MAX), 0);
    }

    #[test]
    fn from_bits_is_what_read_gives_after_the_low_bytes_are_written() {
        let v = 0xfedc_ba98_7654_3210u64;
        let mut b = [0u8; 8];
        b.copy_from_slice(&v.to_le_bytes());
        assert_eq!(u8::from_bits(v), u8::read(&b, 0));
        assert_eq!(u16::from_bits(v), u16::read(&b, 0));
        assert_eq!(u32::from_bits(v), u32::read(&b, 0));
        assert_eq!(i32::from_bits(v), i32::read(&b, 0));
        assert_eq!(u64::from_bits(v), u64::read(&b, 0));
        assert_eq!(i64::from_bits(v), i64::read(&b, 0));
        assert_eq!(ActivityKind::from_bits(v), ActivityKind::read(&b, 0));
    }
}
