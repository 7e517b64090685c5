//! Parquet's RLE / bit-packing hybrid (Encodings.md, "Run Length Encoding /
//! Bit-Packing Hybrid"): the definition levels and the dictionary indices of the
//! pages cupmon writes itself ([`crate::encode::pages`]). A run of 8 or more equal
//! values from a group boundary becomes an RLE run (header `count << 1`, the value
//! in whole bytes), and so does a shorter run that ends the values with no
//! bit-packed run open; the rest goes out in bit-packed runs of groups of 8 values
//! (header `groups << 1 | 1`, values LSB first), the last group padded with zeros
//! (readers stop at the page's value count). These are the parquet crate's
//! encoder's choices, so that its pages and cupmon's are the same bytes.

/// Groups of 8 values per bit-packed run at most: 63 keeps the header one byte, as
/// the parquet crate and parquet-mr write them (the format allows more; some
/// readers have assumed less).
const MAX_GROUPS: usize = 63;

/// Bits needed for values up to `max` (0 for 0: a one-entry dictionary's indices
/// take no bits, as the parquet crate writes them).
pub fn bit_width(max: u32) -> u8 {
    (32 - max.leading_zeros()) as u8
}

/// ULEB128, the hybrid's run headers (and the delta encoding's header).
pub fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An RLE run of `count` times `value`.
pub fn rle_run(value: u32, count: usize, width: u8, out: &mut Vec<u8>) {
    if count == 0 {
        return;
    }
    varint((count as u64) << 1, out);
    out.extend_from_slice(&value.to_le_bytes()[..usize::from(width).div_ceil(8)]);
}

/// Values `values` (fewer than 8 in the last group: zeros follow) as one
/// bit-packed run.
fn bit_packed<T: Copy + Into<u32>>(values: &[T], width: u8, out: &mut Vec<u8>) {
    if values.is_empty() {
        return;
    }
    let groups = values.len().div_ceil(8);
    varint(((groups as u64) << 1) | 1, out);
    let w = u32::from(width);
    out.reserve(groups * usize::from(width));
    let (mut acc, mut bits) = (0u64, 0u32);
    let mut push = |v: u32| {
        acc |= u64::from(v) << bits;
        bits += w;
        if bits >= 32 {
            out.extend_from_slice(&(acc as u32).to_le_bytes());
            acc >>= 32;
            bits -= 32;
        }
    };
    for &v in values {
        push(v.into());
    }
    for _ in values.len()..groups * 8 {
        push(0);
    }
    // 8 values of `w` bits fill whole bytes.
    out.extend_from_slice(&acc.to_le_bytes()[..(bits / 8) as usize]);
}

/// `values` (each below `1 << width`) encoded, appended to `out`.
pub fn encode<T: Copy + Eq + Into<u32>>(values: &[T], width: u8, out: &mut Vec<u8>) {
    let n = values.len();
    // Bit-packed values pending from `packed` on; `i` is a group boundary of them.
    let (mut packed, mut i) = (0, 0);
    while i < n {
        let v = values[i];
        let run = values[i..].iter().take_while(|&&x| x == v).count();
        if run >= 8 || (i + run == n && packed == i) {
            bit_packed(&values[packed..i], width, out);
            rle_run(v.into(), run, width, out);
            i += run;
            packed = i;
        } else {
            i = (i + 8).min(n);
            if i - packed == MAX_GROUPS * 8 {
                bit_packed(&values[packed..i], width, out);
                packed = i;
            }
        }
    }
    bit_packed(&values[packed..], width, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hybrid decoded as Encodings.md defines it, `n` values.
    fn decode(mut b: &[u8], width: u8, n: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let read_varint = |b: &mut &[u8]| {
            let (mut v, mut shift) = (0u64, 0);
            loop {
                let byte = b[0];
                *b = &b[1..];
                v |= u64::from(byte & 0x7f) << shift;
                shift += 7;
                if byte < 0x80 {
                    return v;
                }
            }
        };
        while out.len() < n {
            let h = read_varint(&mut b);
            if h & 1 == 0 {
                let bytes = usize::from(width).div_ceil(8);
                let mut v = [0u8; 4];
                v[..bytes].copy_from_slice(&b[..bytes]);
                b = &b[bytes..];
                out.extend(std::iter::repeat_n(
                    u32::from_le_bytes(v),
                    (h >> 1) as usize,
                ));
            } else {
                let count = (h >> 1) as usize * 8;
                let (mut bit, w) = (0usize, usize::from(width));
                for _ in 0..count {
                    let mut v = 0u32;
                    for k in 0..w {
                        let pos = bit + k;
                        v |= u32::from((b[pos / 8] >> (pos % 8)) & 1) << k;
                    }
                    bit += w;
                    out.push(v);
                }
                b = &b[count * w / 8..];
            }
        }
        assert!(b.is_empty(), "{} bytes left over", b.len());
        out.truncate(n);
        out
    }

    fn round_trip(values: &[u32]) {
        let width = bit_width(values.iter().copied().max().unwrap_or(0));
        let mut out = Vec::new();
        encode(values, width, &mut out);
        assert_eq!(decode(&out, width, values.len()), values, "width {width}");
    }

    #[test]
    fn runs_and_packed_groups_decode_to_the_values() {
        round_trip(&[]);
        round_trip(&[0; 1000]);
        round_trip(&[5; 7]);
        round_trip(&(0..1000).map(|i| i % 7).collect::<Vec<_>>());
        // Runs that start inside a group, between packed stretches.
        let mixed: Vec<u32> = (0..5000)
            .map(|i| if (i / 37) % 3 == 0 { 9 } else { i % 13 })
            .collect();
        round_trip(&mixed);
        // Widths up to 32 bits, and the 17 bits of more than 65536 entries.
        round_trip(&(0..70_000u32).collect::<Vec<_>>());
        round_trip(&[u32::MAX, 0, 1, u32::MAX, 7, 7, 7, 7, 7, 7, 7, 7, 7, 3]);
    }

    #[test]
    fn packed_runs_stay_under_64_groups_and_constants_are_one_run() {
        let mut out = Vec::new();
        let values: Vec<u32> = (0..2000).map(|i| i % 2).collect();
        encode(&values, 1, &mut out);
        // 2000 values: 3 full runs of 63 groups (a header byte and 63 bytes), then
        // one of 61 groups.
        assert_eq!(out[0], (63 << 1) | 1);
        assert_eq!(out.len(), 3 * 64 + 1 + 61);
        out.clear();
        encode(&[1u8; 106_496], 1, &mut out);
        assert_eq!(out, [0x80, 0x80, 0x0d, 0x01]);
    }
}
