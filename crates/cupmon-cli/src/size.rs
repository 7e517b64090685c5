//! Byte sizes on the command line: `1073741824`, `512KiB`, `4GiB`, `1.5 GB`.

/// A size in bytes: a number, optionally followed by a unit (`B`, `KB`/`MB`/`GB`/`TB`
/// in powers of 1000, `KiB`/`MiB`/`GiB`/`TiB` or `K`/`M`/`G`/`T` in powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?} (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size (examples: 1073741824, 512MiB, 4GiB)"))?;
    let bytes = value * factor as f64;
    if !(1.0..=u64::MAX as f64).contains(&bytes) {
        return Err(format!("{text:?}: the size must be at least one byte"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_and_decimal_units() {
        assert_eq!(parse_size("1073741824"), Ok(1 << 30));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("4 gib"), Ok(4 << 30));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert_eq!(parse_size("1.5MB"), Ok(1_500_000));
        assert_eq!(parse_size("100B"), Ok(100));
        assert!(parse_size("0").is_err());
        assert!(parse_size("4 parsecs").is_err());
        assert!(parse_size("GiB").is_err());
        assert!(parse_size("-1").is_err());
    }
}
