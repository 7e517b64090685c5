//! The launches of a slice (`stats --from/--to`), from the launch counter in each
//! segment's digest: how many kernels were launched in the time range, beside the
//! kernel records it holds.

use cupmon_records::digest::SliceLaunches;

/// `slice launches: ...`; `kernel_records`: the slice's kernel records.
pub(super) fn line(launches: &SliceLaunches, kernel_records: u64) -> String {
    let SliceLaunches {
        kernels_launched,
        segments_counted,
        segments_not_counted,
    } = *launches;
    if segments_counted == 0 {
        return "slice launches:  not counted (its segments' digests carry no launch count: \
                the session did not count launches, the dump is older than the count, or \
                the slice cuts through its segments)"
            .to_owned();
    }
    let records = format!(
        "{kernel_records} kernel records in the slice (kernels near its ends may be delivered \
         up to a flush period later, in the next segment)"
    );
    if segments_not_counted == 0 {
        return format!(
            "slice launches:  {kernels_launched} kernels launched while its \
             {segments_counted} segment(s) were open; {records}"
        );
    }
    format!(
        "slice launches:  at least {kernels_launched} kernels launched ({segments_counted} \
         segment(s) counted, {segments_not_counted} not: no count in their digest, or cut by \
         the slice); {records}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launches(kernels_launched: u64, counted: u64, not_counted: u64) -> SliceLaunches {
        SliceLaunches {
            kernels_launched,
            segments_counted: counted,
            segments_not_counted: not_counted,
        }
    }

    #[test]
    fn a_slice_of_counted_segments_says_its_launches() {
        let l = line(&launches(1200, 3, 0), 1190);
        assert!(l.starts_with("slice launches:  1200 kernels launched while its 3 segment"));
        assert!(l.contains("1190 kernel records"), "{l}");
    }

    #[test]
    fn a_slice_partly_counted_says_at_least() {
        let l = line(&launches(800, 2, 1), 900);
        assert!(l.contains("at least 800 kernels"), "{l}");
        assert!(l.contains("1 not"), "{l}");
    }

    #[test]
    fn a_slice_of_old_digests_says_not_counted_never_zero() {
        let l = line(&launches(0, 0, 4), 900);
        assert!(l.contains("not counted"), "{l}");
        assert!(!l.contains(" 0 kernels"), "{l}");
    }
}
