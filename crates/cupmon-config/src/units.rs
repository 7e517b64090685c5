//! The one unit system of cupmon's settings: sizes with binary suffixes (`4M`,
//! `256MiB`, `1G`, plain bytes) and durations with unit suffixes (`500ms`, `1s`,
//! `2m`, `1h`, `1d`; a bare number is seconds).

use std::time::Duration;

/// Bytes for `4M`, `256MiB`, `64K`, `1G`, `1T`, `65536`. K, M, G, T are powers of 1024
/// (as KiB, MiB, ...); `MB`-style decimal units are refused as ambiguous.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        "t" | "tib" => 40,
        "kb" | "mb" | "gb" | "tb" => {
            return Err(format!(
                "{text:?}: use binary units (K or KiB, M or MiB, G or GiB; powers of 1024)"
            ))
        }
        _ => return Err(format!("{text:?} is not a size (use e.g. 4M or 256MiB)")),
    };
    let too_large = || format!("{text:?} is too large (at most 2^64 - 1 bytes)");
    // Whole numbers exactly (an f64 cannot tell 2^64 - 1 from 2^64).
    if let Ok(whole) = number.parse::<u64>() {
        return whole.checked_mul(1u64 << shift).ok_or_else(too_large);
    }
    if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
        // Digits only, yet no u64: more than 2^64 - 1.
        return Err(too_large());
    }
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size (use e.g. 4M or 256MiB)"))?;
    let bytes = value * (1u64 << shift) as f64;
    if bytes.is_finite() && bytes >= u64::MAX as f64 {
        return Err(too_large());
    }
    if !bytes.is_finite() || bytes < 0.0 || bytes.fract() != 0.0 {
        return Err(format!("{text:?} is not a whole number of bytes"));
    }
    Ok(bytes as u64)
}

/// `500ms`, `1.5s`, `2m`, `1h`, `1d`, `30` (seconds).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => {
            return Err(format!(
                "{text:?} is not a duration (use e.g. 500ms, 1s, 2m, 1h)"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (use e.g. 500ms, 1s, 2m, 1h)"))?;
    let secs = value * scale;
    // Beyond ~100 years nothing cupmon schedules makes sense, and Duration would panic.
    if !secs.is_finite() || !(0.0..=3.2e9).contains(&secs) {
        return Err(format!("{text:?} is out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// `4 MiB`, `256 MiB`, `1.5 GiB`, `512 B`: how sizes are shown back.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (unit, shift) in UNITS {
        let scale = 1u64 << shift;
        if bytes >= scale {
            return if bytes % scale == 0 {
                format!("{}{unit}", bytes / scale)
            } else {
                format!("{:.1}{unit}", bytes as f64 / scale as f64)
            };
        }
    }
    format!("{bytes}B")
}

/// `500ms`, `1s`, `1.5s`, `2m`, `1h`: how durations are shown back.
pub fn format_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    // Three decimals, trailing zeros trimmed: 1.5ms, 250us, 0.5us.
    let short = |v: f64, unit: &str| {
        let s = format!("{v:.3}");
        format!("{}{unit}", s.trim_end_matches('0').trim_end_matches('.'))
    };
    if d.is_zero() {
        "0s".to_owned()
    } else if secs < 1e-3 {
        // Not "0ms": a report of a 180 ms run has bins of 120us.
        short(secs * 1e6, "us")
    } else if secs < 1.0 {
        short(secs * 1e3, "ms")
    } else if secs < 60.0 || secs % 60.0 != 0.0 {
        let s = format!("{secs:.3}");
        format!("{}s", s.trim_end_matches('0').trim_end_matches('.'))
    } else if secs % 3600.0 != 0.0 {
        format!("{}m", secs as u64 / 60)
    } else {
        format!("{}h", secs as u64 / 3600)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_millisecond_durations_print_in_microseconds_not_0ms() {
        let f = |ns: u64| format_duration(Duration::from_nanos(ns));
        assert_eq!(f(120_000), "120us");
        assert_eq!(f(500), "0.5us");
        assert_eq!(f(1_500_000), "1.5ms");
        assert_eq!(f(250_000_000), "250ms");
        assert_eq!(f(0), "0s");
        for ns in [120_000u64, 1_500_000, 250_000_000, 90_000_000_000] {
            assert_eq!(parse_duration(&f(ns)), Ok(Duration::from_nanos(ns)), "{ns}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4M"), Ok(4 << 20));
        assert_eq!(parse_size("256MiB"), Ok(256 << 20));
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size(" 64 KiB "), Ok(64 << 10));
        assert!(parse_size("abc").is_err());
        assert!(parse_size("4MB").unwrap_err().contains("binary units"));
        assert!(parse_size("-1M").is_err());
        assert!(parse_size("1e30").is_err());
        // Regression: 2^64 - 1 was "not a whole number of bytes".
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        for big in [
            "18446744073709551616",
            "99999999999999999999999",
            "16777216T",
            "17179869184.5G",
        ] {
            let err = parse_size(big).unwrap_err();
            assert!(
                err.ends_with("is too large (at most 2^64 - 1 bytes)"),
                "{big}: {err}"
            );
        }
        assert!(parse_size("0.5")
            .unwrap_err()
            .contains("not a whole number of bytes"));
        assert_eq!(format_size(4 << 20), "4MiB");
        assert_eq!(format_size(3 << 29), "1.5GiB");
        assert_eq!(format_size(100), "100B");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("1e30").unwrap_err().contains("out of range"));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("soon").is_err());
        assert_eq!(format_duration(Duration::from_millis(500)), "500ms");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_secs(120)), "2m");
    }
}
