//! One call, `madvise(MADV_HUGEPAGE)`, on the part of a `Vec`'s allocation not written
//! yet. A fresh allocation faults in 4 KiB pages as it is first written: the Parquet
//! export of a million-row dump took about 16,600 page faults, a fifth of its time on
//! the VM in the kernel. Where transparent huge pages are on "madvise" (Debian's and
//! Ubuntu's default) each advised 2 MiB takes one fault instead of 512; where they
//! are "always" or "never", or on other systems, the call changes nothing.
//!
//! Only the aligned 2 MiB blocks that lie wholly in the unwritten capacity are
//! advised: pages already written keep their small pages, and nothing outside the
//! allocation is touched.
#![allow(unsafe_code)]

const HUGE_PAGE: usize = 2 << 20;

/// Advise `v`'s capacity beyond its length, when it spans at least one whole
/// aligned 2 MiB block. Call it right after reserving, before writing.
pub fn advise_spare<T>(v: &mut Vec<T>) {
    let size = size_of::<T>();
    if size == 0 {
        return;
    }
    let base = v.as_mut_ptr() as usize;
    if let Some((start, len)) = blocks_within(base + v.len() * size, base + v.capacity() * size) {
        advise(start, len);
    }
}

/// The whole aligned 2 MiB blocks inside [start, end), as (start, length).
fn blocks_within(start: usize, end: usize) -> Option<(usize, usize)> {
    let (start, end) = (
        start.next_multiple_of(HUGE_PAGE),
        end / HUGE_PAGE * HUGE_PAGE,
    );
    (start < end).then(|| (start, end - start))
}

#[cfg(target_os = "linux")]
fn advise(start: usize, len: usize) {
    // SAFETY: [start, start + len) lies inside the Vec's allocation, which the caller's
    // `&mut` keeps alive and unaliased for the call. MADV_HUGEPAGE changes only how the
    // kernel backs the pages, never their contents or whether they are mapped, so no
    // value of the Vec's (written or not) can change. A failure (EINVAL where the kernel
    // has no transparent huge pages) is ignored: the memory is as it was.
    let _ = unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
}

#[cfg(not(target_os = "linux"))]
fn advise(_: usize, _: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advised_capacity_keeps_what_was_written_and_takes_new_values() {
        let mut v: Vec<u64> = (0..1000).collect();
        v.reserve_exact(3 * HUGE_PAGE / 8);
        advise_spare(&mut v);
        assert!(
            v.iter().copied().eq(0..1000),
            "the written part is unchanged"
        );
        v.extend(1000..v.capacity() as u64);
        assert!(v.iter().copied().eq(0..v.len() as u64));
    }

    #[test]
    fn only_whole_aligned_blocks_inside_the_range_are_advised() {
        const H: usize = HUGE_PAGE;
        assert_eq!(blocks_within(10 * H, 13 * H), Some((10 * H, 3 * H)));
        assert_eq!(blocks_within(10 * H + 1, 13 * H - 1), Some((11 * H, H)));
        assert_eq!(
            blocks_within(10 * H + 1, 12 * H - 1),
            None,
            "no whole block"
        );
        assert_eq!(blocks_within(10 * H, 10 * H), None);
    }

    #[test]
    fn small_empty_and_zero_sized_buffers_are_left_alone() {
        let mut small: Vec<u8> = Vec::with_capacity(4096);
        advise_spare(&mut small);
        let mut empty: Vec<u32> = Vec::new();
        advise_spare(&mut empty);
        let mut unit = vec![(); 10];
        advise_spare(&mut unit);
        assert_eq!((small.len(), empty.len(), unit.len()), (0, 0, 10));
    }
}
