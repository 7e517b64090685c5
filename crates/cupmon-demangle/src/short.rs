//! Demangled kernel names shortened for tables and terminal lines (the full name stays
//! where the user can expand or hover it), as Nsight Systems and HTA show them: a
//! templated kernel can demangle to thousands of characters. The one rule every table
//! uses: drop the return type, then the parameter list, then template arguments from
//! the innermost out, until the name fits; what is left over is cut in the middle.

use std::borrow::Cow;

/// `name` in at most `max` characters (at least 8); unchanged when it fits.
///
/// ```
/// use cupmon_demangle::short_name;
/// let name = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, \
///             std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)";
/// assert_eq!(short_name(name, 60), "at::native::vectorized_elementwise_kernel<…>(…)");
/// assert_eq!(short_name("ampere_sgemm_32x128_tn", 60), "ampere_sgemm_32x128_tn");
/// ```
pub fn short_name(name: &str, max: usize) -> Cow<'_, str> {
    let max = max.max(8);
    if name.chars().count() <= max {
        return Cow::Borrowed(name);
    }
    let mut s = strip_return_type(name).to_owned();
    if s.chars().count() > max {
        s = elide_parameters(&s);
    }
    // Template arguments, the deepest first: `<a, B<c>>` -> `<a, …>` -> `<…>`.
    let mut depth = max_depth(&s);
    while s.chars().count() > max && depth > 0 {
        s = elide_deeper_than(&s, depth - 1);
        depth -= 1;
    }
    if s.chars().count() > max {
        let keep = max - 1;
        let head: String = s.chars().take(keep - keep / 3).collect();
        let tail: String = s
            .chars()
            .rev()
            .take(keep / 3)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        s = format!("{head}…{tail}");
    }
    Cow::Owned(s)
}

/// `void f<...>(...)` -> `f<...>(...)`: a leading word before the first space that
/// is outside brackets, when the rest is the function.
fn strip_return_type(name: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in name.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ' ' if depth == 0 => return &name[i + 1..],
            _ => {}
        }
    }
    name
}

/// The last top-level parameter list `( ... )` -> `(…)`.
fn elide_parameters(name: &str) -> String {
    let Some(close) = name.rfind(')') else {
        return name.to_owned();
    };
    let mut depth = 0i32;
    for (i, c) in name[..=close].char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    if close - i <= 2 {
                        return name.to_owned();
                    }
                    return format!("{}(…){}", &name[..i], &name[close + 1..]);
                }
            }
            _ => {}
        }
    }
    name.to_owned()
}

fn max_depth(name: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for c in name.chars() {
        match c {
            '<' => {
                depth += 1;
                max = max.max(depth);
            }
            '>' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Each template argument nested more than `keep` levels deep becomes `…` (an
/// argument at level `keep + 1` whole, with what it holds).
fn elide_deeper_than(name: &str, keep: usize) -> String {
    let mut out = String::with_capacity(name.len());
    let mut depth = 0usize;
    // Inside an elided argument: skip until its level closes or a comma at its level.
    let mut skipping = false;
    for c in name.chars() {
        match c {
            '<' => {
                depth += 1;
                if !skipping {
                    out.push('<');
                    if depth > keep {
                        out.push('…');
                        skipping = true;
                    }
                }
            }
            '>' => {
                if depth == keep + 1 && skipping {
                    skipping = false;
                }
                depth = depth.saturating_sub(1);
                if !skipping {
                    if out.ends_with(' ') && out.trim_end().ends_with('…') {
                        out.truncate(out.trim_end().len());
                    }
                    out.push('>');
                }
            }
            // The next argument at the elided level: elided too (still skipping).
            ',' if skipping && depth == keep + 1 => out.push_str(", …"),
            _ if skipping => {}
            _ => out.push(c),
        }
    }
    // `<…, …, …>` -> `<…>`.
    while out.contains("…, …") {
        out = out.replace("…, …", "…");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_50_line_template_kernel_fits_a_table_cell() {
        let inner = "cute::tuple<cute::C<128>, cute::C<256>, cute::C<64> >, ".repeat(60);
        let name = format!(
            "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<{inner}void> >(cutlass::gemm::kernel::GemmUniversal<{inner}void>::Params)"
        );
        assert!(name.len() > 6000);
        assert_eq!(
            short_name(&name, 100),
            "cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<…> >(…)"
        );
        assert_eq!(short_name(&name, 40), "cutlass::device_kernel<…>(…)");
    }

    #[test]
    fn names_that_fit_are_kept_whole_and_the_rest_cut_in_the_middle() {
        assert_eq!(short_name("k", 40), "k");
        let plain = "a".repeat(50);
        let short = short_name(&plain, 20);
        assert_eq!(short.chars().count(), 20);
        assert!(short.contains('…'));
        // One level of arguments kept when it fits.
        let name = "void f<float, g<int> >(float*)";
        assert_eq!(short_name(name, 20), "f<float, g<int> >(…)");
        assert_eq!(short_name(name, 19), "f<float, g<…> >(…)");
        assert_eq!(short_name(name, 16), "f<…>(…)");
    }
}
