//! The order a row group's rows are written in: by time, rows of the same time in
//! the order they came. Each row's time (from the smallest) and index pack into one
//! u64: unique keys whose order is the write order. Rows come in completion order,
//! which is start order but for work that other work overlapped and finished before
//! (a step's all-reduce beside its compute kernels): the rows already in order are
//! kept where they are, only the others' keys are made and sorted, and the two
//! merged. One scan finds the late rows and a second, the same scan again, merges, so
//! no key is stored for a row in order (a million-row group touched 8 MB less). A
//! comparison sort of every key took several times as long, an LSD radix sort about
//! as long as that (bench/parquet/RESULTS.md). (time, row) pairs remain for the rare
//! row group whose times span too much to pack (a part holds one hour, 42 bits of
//! ns, beside 20 bits of a million rows).

/// Sort buffers, reused.
#[derive(Debug, Default)]
pub struct RowOrder {
    /// Keys of the rows that came after a later one.
    late: Vec<u64>,
    pairs: Vec<(i64, u32)>,
}

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
            let key = |t: i64, i: usize| (t.wrapping_sub(lo) as u64) << row_bits | i as u64;
            let late = &mut self.late;
            late.clear();
            each_row_in_order(time, |_, _| {}, |i, t| late.push(key(t, i)));
            late.sort_unstable();
            let mask = (1u64 << row_bits) - 1;
            out.reserve(n);
            cupmon_hugepages::advise_spare(out);
            let mut b = 0;
            each_row_in_order(
                time,
                |i, t| {
                    let k = key(t, i);
                    while b < late.len() && late[b] < k {
                        out.push((late[b] & mask) as u32);
                        b += 1;
                    }
                    out.push(i as u32);
                },
                |_, _| {},
            );
            out.extend(late[b..].iter().map(|&k| (k & mask) as u32));
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

/// Each row (index, time) to `kept` when its time is at least that of the last row
/// kept before it (those rows are in order), else to `late`. The same answer on every
/// scan, so the merge can scan again instead of storing which rows were late.
#[inline]
fn each_row_in_order(
    time: &[i64],
    mut kept: impl FnMut(usize, i64),
    mut late: impl FnMut(usize, i64),
) {
    let mut last = i64::MIN;
    for (i, &t) in time.iter().enumerate() {
        if t >= last {
            last = t;
            kept(i, t);
        } else {
            late(i, t);
        }
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
        // Interleaved streams, ties.
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
        // Nearly every key late (the first time far ahead), times over many bits.
        let late: Vec<i64> = std::iter::once(1 << 40)
            .chain((0..5000).map(|i| i % 77))
            .collect();
        assert!(order.sort(&late, &mut out));
        assert_eq!(out, by_pairs(&late));
        let spread: Vec<i64> = (0..20_000i64)
            .map(|i| (i * 7919 % 20_011) << (i % 30))
            .collect();
        assert!(order.sort(&spread, &mut out));
        assert_eq!(out, by_pairs(&spread));
    }
}
