//! CUPTI's own settings from `CUPMON_CUPTI_*`, applied before the activity kinds are
//! enabled, and what happened, for the meta (`cupti_settings`).

use cupmon_cupti::Cupti;
use serde_json::{json, Map, Value};

use crate::MonitorConfig;

/// Applies the settings `config` gives; `None` when it gives none. A setting CUPTI
/// refuses is a warning and is named in the result.
pub(crate) fn apply(cupti: &Cupti, config: &MonitorConfig) -> Option<Value> {
    let mut applied = Map::new();
    let mut refused = Vec::new();
    let mut note =
        |name: &str, value: u64, result: Result<(), cupmon_cupti::CuptiError>| match result {
            Ok(()) => {
                applied.insert(name.to_owned(), json!(value));
            }
            Err(e) => {
                cupmon_log::warn!("CUPTI setting {name} = {value} not applied: {e}");
                refused.push(json!({"setting": name, "value": value, "error": e.to_string()}));
            }
        };
    if let Some(period) = config.cupti_flush_period {
        let ms = u32::try_from(period.as_millis()).unwrap_or(u32::MAX);
        note("flush_period_ms", ms.into(), cupti.set_flush_period(ms));
    }
    if let Some(bytes) = config.cupti_device_buffer_size {
        note(
            "device_buffer_size",
            bytes,
            cupti.set_device_buffer_size(bytes),
        );
    }
    if let Some(n) = config.cupti_device_buffer_pool_limit {
        note(
            "device_buffer_pool_limit",
            n,
            cupti.set_device_buffer_pool_limit(n),
        );
    }
    if applied.is_empty() && refused.is_empty() {
        return None;
    }
    if !refused.is_empty() {
        applied.insert("refused".to_owned(), Value::Array(refused));
    }
    Some(Value::Object(applied))
}
