//! The protobuf wire format, as far as the writer needs it: varints, tags,
//! fixed64, and length-delimited fields whose length is patched in after the
//! body is written (one placeholder byte; the body moves only when it turns
//! out to be 128 bytes or longer, which few TrackEvents are).

const VARINT: u32 = 0;
const I64: u32 = 1;
const LEN: u32 = 2;

#[inline]
pub(crate) fn varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

#[inline]
fn varint_len(v: u64) -> usize {
    // 1 byte per 7 bits, at least one.
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

#[inline]
fn tag(buf: &mut Vec<u8>, field: u32, wire_type: u32) {
    varint(buf, u64::from((field << 3) | wire_type));
}

/// A `uint64`/`uint32`/enum/`bool` field.
#[inline]
pub(crate) fn uint(buf: &mut Vec<u8>, field: u32, v: u64) {
    tag(buf, field, VARINT);
    varint(buf, v);
}

/// An `int64` or `int32` field (negative values take ten bytes, as protobuf
/// sign-extends `int32` too).
#[inline]
pub(crate) fn int(buf: &mut Vec<u8>, field: u32, v: i64) {
    uint(buf, field, v as u64);
}

#[inline]
pub(crate) fn fixed64(buf: &mut Vec<u8>, field: u32, v: u64) {
    tag(buf, field, I64);
    buf.extend_from_slice(&v.to_le_bytes());
}

#[inline]
pub(crate) fn double(buf: &mut Vec<u8>, field: u32, v: f64) {
    fixed64(buf, field, v.to_bits());
}

/// A `string` or `bytes` field, or an already encoded message.
#[inline]
pub(crate) fn bytes(buf: &mut Vec<u8>, field: u32, v: &[u8]) {
    tag(buf, field, LEN);
    varint(buf, v.len() as u64);
    buf.extend_from_slice(v);
}

/// Where a nested message's body starts (its length byte is just before).
#[derive(Debug, Clone, Copy)]
#[must_use = "a nested message must be closed with wire::end"]
pub(crate) struct Nested(usize);

/// Opens a nested message (or any length-delimited field written in pieces).
#[inline]
pub(crate) fn begin(buf: &mut Vec<u8>, field: u32) -> Nested {
    tag(buf, field, LEN);
    buf.push(0);
    Nested(buf.len())
}

/// Closes a nested message: writes its length, moving the body if the
/// length needs more than the one byte reserved.
#[inline]
pub(crate) fn end(buf: &mut Vec<u8>, at: Nested) {
    let start = at.0;
    let len = buf.len() - start;
    if len < 0x80 {
        buf[start - 1] = len as u8;
        return;
    }
    let extra = varint_len(len as u64) - 1;
    let old_end = buf.len();
    buf.resize(old_end + extra, 0);
    buf.copy_within(start..old_end, start + extra);
    let mut v = len as u64;
    let mut i = start - 1;
    while v >= 0x80 {
        buf[i] = (v as u8) | 0x80;
        v >>= 7;
        i += 1;
    }
    buf[i] = v as u8;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_varint(b: &[u8]) -> (u64, usize) {
        let mut v = 0u64;
        for (i, byte) in b.iter().enumerate() {
            v |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return (v, i + 1);
            }
        }
        panic!("unterminated varint {b:?}");
    }

    #[test]
    fn varints_round_trip_and_have_the_computed_length() {
        for v in [
            0,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut b = Vec::new();
            varint(&mut b, v);
            assert_eq!(decode_varint(&b), (v, b.len()), "value {v}");
            assert_eq!(varint_len(v), b.len(), "length of {v}");
        }
    }

    #[test]
    fn nested_lengths_are_patched_for_short_and_long_bodies() {
        for body_len in [0usize, 1, 127, 128, 200, 16_383, 16_384, 70_000] {
            let mut b = vec![0xAA];
            let at = begin(&mut b, 1);
            b.resize(b.len() + body_len, 0x55);
            end(&mut b, at);
            assert_eq!(b[0], 0xAA);
            assert_eq!(b[1], (1 << 3) | 2, "tag");
            let (len, n) = decode_varint(&b[2..]);
            assert_eq!(len as usize, body_len);
            assert_eq!(b.len(), 2 + n + body_len);
            assert!(b[2 + n..].iter().all(|&x| x == 0x55));
        }
    }

    #[test]
    fn negative_ints_sign_extend_to_ten_bytes() {
        let mut b = Vec::new();
        int(&mut b, 1, -1);
        assert_eq!(b.len(), 1 + 10);
    }
}
