//! DELTA_BINARY_PACKED (Encodings.md) of a page of INT64 values, laid out as the
//! parquet crate's encoder lays it out, so that its pages and cupmon's are the
//! same bytes: a header (values per block, miniblocks per block, value count, the
//! first value as a zigzag ULEB128), then per block of up to 256 deltas the
//! smallest delta (zigzag ULEB128), four bit widths, and each miniblock of 64
//! deltas minus the smallest, bit-packed LSB first (the last miniblock padded with
//! zeros, the widths of miniblocks past the last value 0). Deltas wrap, as the
//! crate's do.

use super::rle::varint;

/// The crate's INT64 layout: 4 miniblocks of 64 values.
const MINIBLOCK: usize = 64;
const MINIBLOCKS: usize = 4;
const BLOCK: usize = MINIBLOCK * MINIBLOCKS;

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The page header.
fn header(block: usize, count: usize, first: i64, out: &mut Vec<u8>) {
    varint(block as u64, out);
    varint(MINIBLOCKS as u64, out);
    varint(count as u64, out);
    varint(zigzag(first), out);
}

/// `values` encoded, appended to `out`.
pub fn encode_i64(values: &[i64], out: &mut Vec<u8>) {
    header(
        BLOCK,
        values.len(),
        values.first().copied().unwrap_or(0),
        out,
    );
    if values.len() < 2 {
        return;
    }
    let mut deltas = [0u64; BLOCK];
    let (mut prev, mut rest) = (values[0], &values[1..]);
    while !rest.is_empty() {
        let (block, tail) = rest.split_at(rest.len().min(BLOCK));
        rest = tail;
        // Each pass a plain loop over the block, which the compiler can unroll or
        // vectorize: the deltas (from the value before, the last block's for the
        // first), their minimum, then each miniblock's width from the OR of its
        // values (the same highest bit as their maximum).
        let deltas = &mut deltas[..block.len()];
        deltas[0] = block[0].wrapping_sub(prev) as u64;
        for (d, w) in deltas[1..].iter_mut().zip(block.windows(2)) {
            *d = w[1].wrapping_sub(w[0]) as u64;
        }
        prev = block[block.len() - 1];
        let min = deltas.iter().map(|&d| d as i64).min().unwrap_or(0);
        varint(zigzag(min), out);
        let widths_at = out.len();
        out.extend_from_slice(&[0; MINIBLOCKS]);
        for (m, mini) in deltas.chunks_mut(MINIBLOCK).enumerate() {
            let mut bits = 0u64;
            for d in mini.iter_mut() {
                *d = d.wrapping_sub(min as u64);
                bits |= *d;
            }
            let width = 64 - bits.leading_zeros();
            out[widths_at + m] = width as u8;
            pack(mini, width, out);
        }
    }
}

/// A miniblock's values (fewer than 64 in the last: zeros follow), `width` bits
/// each: 8 * `width` bytes.
fn pack(values: &[u64], width: u32, out: &mut Vec<u8>) {
    if width == 0 {
        return;
    }
    let start = out.len();
    out.resize(start + 8 * width as usize, 0);
    let words = &mut out[start..];
    // LSB first: value i starts at bit i * width; one that crosses a word boundary
    // puts its high bits at the start of the next word.
    let (mut acc, mut bits, mut word) = (0u64, 0u32, 0usize);
    for &v in values {
        acc |= v << bits;
        bits += width;
        if bits >= 64 {
            words[word * 8..word * 8 + 8].copy_from_slice(&acc.to_le_bytes());
            word += 1;
            bits -= 64;
            // The bits of `v` that did not fit (none when it ended on the boundary).
            acc = if bits == 0 { 0 } else { v >> (width - bits) };
        }
    }
    if bits > 0 {
        words[word * 8..word * 8 + 8].copy_from_slice(&acc.to_le_bytes());
    }
}

/// `count` times `value` with the crate's layout for blocks of `block` values
/// (128 for INT32, 256 for INT64): the header, then per block a zero minimum
/// delta and four zero bit widths (no packed bits).
pub fn constant(value: i64, count: usize, block: usize, out: &mut Vec<u8>) {
    header(block, count, value, out);
    let blocks = count.saturating_sub(1).div_ceil(block);
    out.resize(out.len() + blocks * (1 + MINIBLOCKS), 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_varint(b: &mut &[u8]) -> u64 {
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
    }

    fn unzigzag(u: u64) -> i64 {
        (u >> 1) as i64 ^ -((u & 1) as i64)
    }

    /// The encoding decoded as Encodings.md defines it.
    fn decode(mut b: &[u8]) -> Vec<i64> {
        let block = read_varint(&mut b) as usize;
        let minis = read_varint(&mut b) as usize;
        let count = read_varint(&mut b) as usize;
        let mut last = unzigzag(read_varint(&mut b));
        let mut out = vec![last];
        let per_mini = block / minis;
        while out.len() < count {
            let min = unzigzag(read_varint(&mut b));
            let widths = b[..minis].to_vec();
            b = &b[minis..];
            for &w in &widths {
                if out.len() >= count {
                    break;
                }
                let w = usize::from(w);
                for k in 0..per_mini {
                    let mut v = 0u64;
                    for bit in 0..w {
                        let pos = k * w + bit;
                        v |= u64::from((b[pos / 8] >> (pos % 8)) & 1) << bit;
                    }
                    if out.len() < count {
                        last = last.wrapping_add(min.wrapping_add(v as i64));
                        out.push(last);
                    }
                }
                b = &b[per_mini * w / 8..];
            }
        }
        assert!(b.is_empty(), "{} bytes left over", b.len());
        out.truncate(count);
        out
    }

    #[test]
    fn values_decode_as_written() {
        for values in [
            vec![],
            vec![7],
            vec![1, 2],
            (0..1000)
                .map(|i| 1_796_090_400_000_000_000 + i * i * 37)
                .collect(),
            (0..777).map(|i| (i * 7919) % 1000 - 500).collect(),
            vec![i64::MIN, i64::MAX, 0, i64::MAX, i64::MIN, -1],
            vec![5; 300],
        ] {
            let mut out = Vec::new();
            encode_i64(&values, &mut out);
            assert_eq!(decode(&out), values);
        }
        let mut out = Vec::new();
        constant(-3, 1000, 256, &mut out);
        assert_eq!(decode(&out), vec![-3; 1000]);
    }
}
