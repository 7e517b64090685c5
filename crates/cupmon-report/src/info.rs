//! What a dump's meta says of its process, for the report's header: the command, the
//! host, the GPUs (Kineto's `deviceProperties`, written by the monitor), the rank.
//! Dumps written before cupmon recorded a key (PyTorch's own, the fixtures) say
//! "unknown" there.

use cupmon_records::MetaFile;
use serde_json::Value;

/// One GPU as the meta describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gpu {
    pub id: i64,
    pub name: String,
    pub memory_bytes: Option<u64>,
    /// `9.0`.
    pub compute: Option<String>,
    pub sms: Option<i64>,
}

/// A process's description.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessInfo {
    pub pid: Option<u64>,
    /// `RANK` at start (or `distributedInfo.rank`).
    pub rank: Option<String>,
    pub world_size: Option<i64>,
    pub command: Option<String>,
    pub host: Option<String>,
    pub gpus: Vec<Gpu>,
    /// The path of the libcupti the process loaded.
    pub cupti_library: Option<String>,
    pub session_start_unix_ns: Option<u64>,
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A command line as one string, each argument with spaces or quotes quoted.
fn command_line(v: &Value) -> Option<String> {
    let args = v.as_array()?;
    let quoted: Vec<String> = args
        .iter()
        .map(|a| {
            let a = text(a);
            if a.is_empty() || a.contains([' ', '\'', '"', '\t']) {
                format!("'{}'", a.replace('\'', r"'\''"))
            } else {
                a
            }
        })
        .collect();
    Some(quoted.join(" "))
}

impl ProcessInfo {
    pub fn from_meta(meta: &MetaFile) -> Self {
        let json = meta.json();
        let distributed = json.get("distributedInfo");
        let gpus = json
            .get("device_properties")
            .and_then(Value::as_array)
            .map(|devices| devices.iter().filter_map(gpu).collect())
            .unwrap_or_default();
        Self {
            pid: meta.pid(),
            rank: json
                .get("rank")
                .or_else(|| distributed?.get("rank"))
                .map(text),
            world_size: distributed
                .and_then(|d| d.get("world_size"))
                .and_then(Value::as_i64),
            command: json.get("command").and_then(|c| match c {
                Value::String(s) => Some(s.clone()),
                other => command_line(other),
            }),
            host: json.get("host").map(text),
            gpus,
            cupti_library: json.get("cupti_library").map(text),
            session_start_unix_ns: meta.session_start_unix_ns(),
        }
    }
}

fn gpu(v: &Value) -> Option<Gpu> {
    let int = |k: &str| v.get(k).and_then(Value::as_i64);
    Some(Gpu {
        id: int("id")?,
        name: v.get("name").map(text)?,
        memory_bytes: v.get("totalGlobalMem").and_then(Value::as_u64),
        compute: match (int("computeMajor"), int("computeMinor")) {
            (Some(a), Some(b)) => Some(format!("{a}.{b}")),
            _ => None,
        },
        sms: int("numSms"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_the_monitor_and_their_absence() {
        let mut meta = MetaFile::new();
        meta.set("pid", 42)
            .set("command", vec!["python", "train.py", "--name", "a b"])
            .set("host", "node7")
            .set(
                "distributedInfo",
                serde_json::json!({"rank": 3, "world_size": 8}),
            )
            .set(
                "device_properties",
                serde_json::json!([{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150_000_000_000u64,
                                    "computeMajor": 9, "computeMinor": 0, "numSms": 132}]),
            );
        let info = ProcessInfo::from_meta(&meta);
        assert_eq!(info.pid, Some(42));
        assert_eq!(info.rank.as_deref(), Some("3"));
        assert_eq!(info.world_size, Some(8));
        assert_eq!(
            info.command.as_deref(),
            Some("python train.py --name 'a b'")
        );
        assert_eq!(info.host.as_deref(), Some("node7"));
        assert_eq!(info.gpus[0].name, "NVIDIA H200");
        assert_eq!(info.gpus[0].compute.as_deref(), Some("9.0"));
        let bare = ProcessInfo::from_meta(&MetaFile::new());
        assert_eq!(bare, ProcessInfo::default());
    }
}
