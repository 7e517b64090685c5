//! Time partitions: `day=YYYY-MM-DD/hour=H` (UTC) of a Unix-ns time, the Hive layout
//! that DuckDB, Spark and Trino read as partition columns.

use cupmon_config::time_spec::civil_from_days;

/// Nanoseconds in an hour.
pub const HOUR_NS: i64 = 3_600_000_000_000;

/// Hours since the Unix epoch of a Unix-ns time.
pub fn hour_of(ns: i64) -> i64 {
    ns.div_euclid(HOUR_NS)
}

/// `day=YYYY-MM-DD/hour=H` of an hour since the epoch.
pub fn partition_dir(hour: i64) -> String {
    let days = hour.div_euclid(24);
    let (y, m, d) = civil_from_days(days);
    format!("day={y:04}-{m:02}-{d:02}/hour={}", hour.rem_euclid(24))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_are_utc_days_and_hours() {
        assert_eq!(partition_dir(0), "day=1970-01-01/hour=0");
        // 2026-12-01T07:51:00Z
        let ns = 1_796_111_460 * 1_000_000_000;
        assert_eq!(partition_dir(hour_of(ns)), "day=2026-12-01/hour=7");
        // Leap day, last hour.
        let ns = (951_868_800 - 1) * 1_000_000_000; // 2000-02-29T23:59:59Z
        assert_eq!(partition_dir(hour_of(ns)), "day=2000-02-29/hour=23");
        assert_eq!(partition_dir(hour_of(-1)), "day=1969-12-31/hour=23");
    }
}
