//! The order a row group's rows are written in: by time, rows of the same time in
//! the order they came. Rows come in buffer order, nearly sorted (streams
//! interleave). Each row's time (from the smallest) and index are packed into one
//! u64 and sorted by the time bits alone, least significant digit first: a stable
//! radix sort keeps rows of one time in their order, and takes a few passes over
//! the keys where a comparison sort of them took twice as long (and of (time, row)
//! pairs several times). (time, row) pairs remain for the rare row group whose
//! times span too much to pack (a part holds one hour, 42 bits of ns, beside 20
//! bits of a million rows).

/// Sort buffers, reused.
#[derive(Debug, Default)]
pub struct RowOrder {
    keys: Vec<u64>,
    spare: Vec<u64>,
    pairs: Vec<(i64, u32)>,
}

/// Bits of the time sorted per pass.
const DIGIT: u32 = 11;

impl RowOrder {
    /// The rows of `time` in write order into `out` (cleared first); false, with
    /// `out` empty, when they are in order already.
    pub fn sort(&mut self, time: &[i64], out: &mut Vec<u32>) -> bool {
        out.clear();
        if time.windows(2).all(|w| w[0] <= w[1]) {
            return false;
        }
        let n = time.len();
        let row_bits = 64 - ((n - 1) as u64).leading_zeros();
        let lo = time.iter().copied().min().unwrap_or(0);
        let hi = time.iter().copied().max().unwrap_or(0);
        let span = hi as i128 - lo as i128;
        if span < 1i128 << (64 - row_bits) {
            let keys = &mut self.keys;
            keys.clear();
            keys.extend(
                time.iter()
                    .zip(0u64..)
                    .map(|(&t, i)| (t.wrapping_sub(lo) as u64) << row_bits | i),
            );
            let time_bits = 128 - (span as u128).leading_zeros();
            radix_sort(keys, &mut self.spare, row_bits, time_bits);
            let mask = (1u64 << row_bits) - 1;
            out.extend(keys.iter().map(|&k| (k & mask) as u32));
        } else {
            let pairs = &mut self.pairs;
            pairs.clear();
            pairs.extend(time.iter().zip(0..n as u32).map(|(&t, i)| (t, i)));
            pairs.sort_unstable();
            out.extend(pairs.iter().map(|&(_, i)| i));
        }
        true
    }
}

/// `keys` sorted by their bits `from..from + bits`, stably (least significant
/// digit first; `spare` is the other buffer). Digits every key shares are skipped.
fn radix_sort(keys: &mut Vec<u64>, spare: &mut Vec<u64>, from: u32, bits: u32) {
    const BUCKETS: usize = 1 << DIGIT;
    let passes = bits.div_ceil(DIGIT) as usize;
    // Every pass's counts in one read of the keys.
    let mut counts = vec![[0usize; BUCKETS]; passes];
    for &k in keys.iter() {
        for (p, c) in counts.iter_mut().enumerate() {
            c[((k >> (from + p as u32 * DIGIT)) as usize) & (BUCKETS - 1)] += 1;
        }
    }
    spare.clear();
    spare.resize(keys.len(), 0);
    for (p, c) in counts.iter_mut().enumerate() {
        if c.contains(&keys.len()) {
            continue;
        }
        let mut at = 0;
        for n in c.iter_mut() {
            (*n, at) = (at, at + *n);
        }
        let shift = from + p as u32 * DIGIT;
        for &k in keys.iter() {
            let slot = &mut c[((k >> shift) as usize) & (BUCKETS - 1)];
            spare[*slot] = k;
            *slot += 1;
        }
        std::mem::swap(keys, spare);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order by (time, row), as sorting the pairs gives it.
    fn by_pairs(time: &[i64]) -> Vec<u32> {
        let mut pairs: Vec<(i64, u32)> = time.iter().zip(0..).map(|(&t, i)| (t, i)).collect();
        pairs.sort();
        pairs.into_iter().map(|p| p.1).collect()
    }

    #[test]
    fn packed_keys_and_pairs_give_the_time_order_ties_by_row() {
        let mut order = RowOrder::default();
        let mut out = Vec::new();
        assert!(!order.sort(&[1, 2, 2, 5], &mut out));
        assert!(out.is_empty());
        // Interleaved streams, ties, one row.
        let time: Vec<i64> = (0..5000i64)
            .map(|i| 1_796_090_400_000_000_000 + (i * 7919) % 1000 / 3)
            .collect();
        assert!(order.sort(&time, &mut out));
        assert_eq!(out, by_pairs(&time));
        // Too wide to pack: the pairs.
        let wide = [i64::MAX, 0, i64::MIN, 5, 0];
        assert!(order.sort(&wide, &mut out));
        assert_eq!(out, by_pairs(&wide));
        assert!(order.sort(&[3, 1], &mut out));
        assert_eq!(out, [1, 0]);
        // Times over many digits, with ties.
        let spread: Vec<i64> = (0..20_000i64)
            .map(|i| (i * 7919 % 20_011) << (i % 30))
            .collect();
        assert!(order.sort(&spread, &mut out));
        assert_eq!(out, by_pairs(&spread));
    }
}
