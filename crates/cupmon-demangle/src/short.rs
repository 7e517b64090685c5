//! Kernel names short enough for a line of a table: a demangled C++ name such as
//! `void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>,
//! at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, ...)` runs to
//! hundreds of characters (900 seen in `cupmon stats`). [`short_name`] keeps what tells
//! kernels apart at a glance, the qualified base name, and elides template arguments
//! and parameter lists (`void at::native::vectorized_elementwise_kernel<…>(…)`), as
//! Nsight Systems and HTA show kernels in tables. Every table of kernel names (`cupmon
//! stats`, `cupmon sql --top-kernels`, the report) uses this one function; the full
//! name stays in the data (traces, Parquet, the report's expanded row).

use std::borrow::Cow;

/// What stands for the elided part.
pub const ELLIPSIS: char = '…';

/// `name` in at most `max_chars` characters (at least 8 are allowed): unchanged
/// when it fits; else with the contents of its parameter lists elided (`(…)`),
/// then of its template arguments too (`<…>`; `(anonymous namespace)` kept),
/// then, if that is still too long, its middle.
pub fn short_name(name: &str, max_chars: usize) -> Cow<'_, str> {
    let max_chars = max_chars.max(8);
    if name.chars().count() <= max_chars {
        return Cow::Borrowed(name);
    }
    let fits = |s: &String| s.chars().count() <= max_chars;
    let without_parameters = elide_brackets(name, false);
    if fits(&without_parameters) {
        return Cow::Owned(without_parameters);
    }
    let elided = elide_brackets(name, true);
    if fits(&elided) {
        return Cow::Owned(elided);
    }
    Cow::Owned(elide_middle(&elided, max_chars))
}

/// The contents of every outermost `(...)`, and with `templates` of every
/// outermost `<...>`, replaced by `…`. A `<` or `(` of an operator's name
/// (`operator<`, `operator()`) is not a bracket; unbalanced brackets leave the
/// rest as it is.
fn elide_brackets(name: &str, templates: bool) -> String {
    let mut out = String::with_capacity(name.len().min(256));
    let mut depth = 0usize;
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        let after = &rest[c.len_utf8()..];
        if depth == 0 {
            if let Some(op) = operator_at(rest) {
                out.push_str(op);
                rest = &rest[op.len()..];
                continue;
            }
            if rest.starts_with("(anonymous namespace)") {
                out.push_str("(anonymous namespace)");
                rest = &rest["(anonymous namespace)".len()..];
                continue;
            }
        }
        match c {
            '<' if depth == 0 && !templates => {
                // Kept whole, brackets inside included.
                let Some(end) = closing(rest) else {
                    out.push_str(rest);
                    break;
                };
                out.push_str(&rest[..=end]);
                rest = &rest[end + 1..];
                continue;
            }
            '<' | '(' => {
                if depth == 0 {
                    if closing(rest).is_none() {
                        out.push_str(rest);
                        break;
                    }
                    out.push(c);
                    out.push(ELLIPSIS);
                }
                depth += 1;
            }
            '>' | ')' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    out.push(c);
                }
            }
            _ if depth == 0 => out.push(c),
            _ => {}
        }
        rest = after;
    }
    out
}

/// `operator<`, `operator<<`, `operator()`, `operator<=` ... at the start of `s`.
fn operator_at(s: &str) -> Option<&str> {
    let tail = s.strip_prefix("operator")?;
    let len = ["<<=", "<=>", "<<", "<=", "()", "<", ">>=", ">>", ">=", ">"]
        .iter()
        .find(|op| tail.starts_with(*op))?
        .len();
    Some(&s[.."operator".len() + len])
}

/// Where the bracket opening `s` closes, if it does (counting both kinds).
fn closing(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The start and the end of `s`, `…` between, `max_chars` in all: the end
/// holds the base name and its brackets, the start the return type and scope.
fn elide_middle(s: &str, max_chars: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    let tail = (max_chars - 1) * 2 / 3;
    let head = max_chars - 1 - tail;
    let mut out: String = chars[..head].iter().collect();
    out.push(ELLIPSIS);
    out.extend(&chars[chars.len() - tail..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILL: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";

    #[test]
    fn a_name_that_fits_is_unchanged() {
        assert!(matches!(
            short_name("ampere_sgemm_128x64_nn", 40),
            Cow::Borrowed(_)
        ));
        assert_eq!(short_name(FILL, 1000), FILL);
    }

    #[test]
    fn template_arguments_and_parameters_are_elided_and_the_base_name_kept() {
        assert_eq!(
            short_name(FILL, 80),
            "void at::native::vectorized_elementwise_kernel<…>(…)"
        );
        assert_eq!(
            short_name("void (anonymous namespace)::softmax_warp_forward<float, float, float, 8, false, false>(float*, float const*, int, int, int, bool const*, int, bool)", 70),
            "void (anonymous namespace)::softmax_warp_forward<…>(…)"
        );
        assert_eq!(
            // libstdc++ writes a space between an operator< and its template arguments.
            short_name("bool std::operator< <long, long>(std::pair<long, long> const&, std::pair<long, long> const&)", 30),
            "bool std::operator< <…>(…)"
        );
    }

    #[test]
    fn template_arguments_stay_when_only_the_parameters_must_go() {
        assert_eq!(
            short_name(FILL, 120),
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(…)"
        );
    }

    #[test]
    fn a_name_still_too_long_loses_its_middle_and_keeps_its_end() {
        let long = format!(
            "void {}::kernel_name<int>(int)",
            "very_long_namespace".repeat(10)
        );
        let short = short_name(&long, 40);
        assert_eq!(short.chars().count(), 40, "{short}");
        assert!(short.ends_with("space::kernel_name<…>(…)"), "{short}");
        assert!(short.starts_with("void very_"), "{short}");
    }

    #[test]
    fn unbalanced_brackets_are_kept_as_they_are() {
        let name = format!("weird<{}", "x".repeat(50));
        let short = short_name(&name, 20);
        assert_eq!(short.chars().count(), 20);
        assert!(short.starts_with("weird<"), "{short}");
    }

    #[test]
    fn any_name_gets_at_most_the_budget() {
        for name in [
            FILL,
            "a(b<c)d>e",
            "operator()",
            "<<<<>>>>",
            "((((((((((((((((((((x",
        ] {
            for max in [1, 8, 12, 30] {
                let short = short_name(name, max);
                assert!(short.chars().count() <= max.max(8), "{name} {max}: {short}");
            }
        }
    }
}
