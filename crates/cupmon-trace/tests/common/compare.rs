//! Semantic comparison of two traces (what `trace_compare.py` calls equal):
//! same top-level keys with equal values, `traceEvents` equal event by event
//! in order, numbers equal by value (an int and a float of the same value are
//! equal).

use serde_json::Value;

/// Up to `limit` differences between `expected` and `actual`, as `$.path: a != b`.
pub fn trace_differences(expected: &Value, actual: &Value, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    diff(expected, actual, "$", &mut out, limit);
    out
}

fn num_eq(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some(x), Some(y)) => x == y,
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x == y || (x.is_nan() && y.is_nan()),
            _ => false,
        },
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 120 {
        format!("{}...", &s[..s.floor_char_boundary(117)])
    } else {
        s
    }
}

fn diff(a: &Value, b: &Value, path: &str, out: &mut Vec<String>, limit: usize) {
    if out.len() >= limit {
        return;
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if !num_eq(x, y) {
                out.push(format!("{path}: {x} != {y}"));
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            let missing: Vec<&String> = x.keys().filter(|k| !y.contains_key(*k)).collect();
            let extra: Vec<&String> = y.keys().filter(|k| !x.contains_key(*k)).collect();
            if !missing.is_empty() || !extra.is_empty() {
                out.push(format!(
                    "{path}: keys differ: missing {missing:?}, extra {extra:?}"
                ));
                return;
            }
            for (k, v) in x {
                diff(v, &y[k], &format!("{path}.{k}"), out, limit);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                out.push(format!("{path}: length {} != {}", x.len(), y.len()));
            }
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                diff(v, w, &format!("{path}[{i}]"), out, limit);
            }
        }
        _ if std::mem::discriminant(a) != std::mem::discriminant(b) => {
            out.push(format!(
                "{path}: type differs: {} != {}",
                short(a),
                short(b)
            ));
        }
        _ => {
            if a != b {
                out.push(format!("{path}: {} != {}", short(a), short(b)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ints_and_floats_compare_by_value() {
        assert!(trace_differences(&json!({"a": 1}), &json!({"a": 1.0}), 5).is_empty());
        assert_eq!(
            trace_differences(&json!([1, 2]), &json!([1, 3]), 5),
            ["$[1]: 2 != 3"]
        );
        assert_eq!(
            trace_differences(&json!({"a": "x"}), &json!({"a": 1}), 5).len(),
            1
        );
    }
}
