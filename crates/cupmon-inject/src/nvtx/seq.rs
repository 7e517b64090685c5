//! torch's autograd sequence numbers in NVTX range names: under
//! `torch.autograd.profiler.emit_nvtx()` each op's range is named
//! `"<op>, seq = <N>, op_id = <M>"` (then `sizes = ...` with `record_shapes`), forward
//! ops and the backward ops the autograd engine runs alike (a backward op carries the
//! number of the forward op that made it; ops outside autograd carry none). The number
//! ties a backward kernel, launched from a thread without Python frames, to the Python
//! line of its forward op (`cupmon_cupti::launches::autograd`, which does the work).
//!
//! A name is looked at once per thread when it is interned (`ranges.rs` keeps the
//! answer with the name), so a program whose ranges carry no number pays nothing per
//! push for this.

pub(crate) use cupmon_cupti::launches::autograd::SeqRange;

/// What torch writes before the number.
const SEQ_PREFIX: &[u8] = b", seq = ";

/// The autograd sequence number a range's name carries, if any.
pub(crate) fn seq_of(name: &[u8]) -> Option<u64> {
    // No '=' (most names): no number, without looking for the whole prefix.
    if !name.contains(&b'=') {
        return None;
    }
    let at = name
        .windows(SEQ_PREFIX.len())
        .position(|w| w == SEQ_PREFIX)?;
    let digits = &name[at + SEQ_PREFIX.len()..];
    let end = digits
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    std::str::from_utf8(&digits[..end]).ok()?.parse().ok()
}

/// A range named with number `seq` (if any) opened on this thread.
#[inline(always)]
pub(crate) fn opened(seq: Option<u64>) -> SeqRange {
    match seq {
        Some(seq) => cupmon_cupti::launches::autograd::range_opened(seq),
        None => SeqRange::Ignored,
    }
}

/// A range [`opened`] answered `how` for closed.
#[inline(always)]
pub(crate) fn closed(how: SeqRange) {
    if how != SeqRange::Ignored {
        cupmon_cupti::launches::autograd::range_closed(how);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torch_emit_nvtx_names_give_their_sequence_number() {
        assert_eq!(seq_of(b"aten::addmm, seq = 41, op_id = 7"), Some(41));
        assert_eq!(seq_of(b"AddmmBackward0, seq = 41, op_id = 90"), Some(41));
        assert_eq!(
            seq_of(b"aten::mm, seq = 3, op_id = 5, sizes = [[2, 3], [3, 4]]"),
            Some(3)
        );
        assert_eq!(seq_of(b"MyFn, seq = 18446744073709551615"), Some(u64::MAX));
        assert_eq!(
            seq_of(b"aten::empty, op_id = 2"),
            None,
            "no autograd: no number"
        );
        assert_eq!(seq_of(b"forward"), None);
        assert_eq!(seq_of(b"x, seq = "), None);
        assert_eq!(seq_of(b"x, seq = 99999999999999999999999"), None, "too big");
        assert_eq!(seq_of(b"seq = 4"), None, "torch writes the comma first");
    }
}
