//! `cupti_monitor_meta.bin`: a 16-byte header `<8sII>` (`b"CUPMMETA"`, version 2,
//! payload length) followed by compact JSON describing the session. Keys cupmon does not
//! know are kept and written back unchanged, so PyTorch's monitor and cupmon can both
//! add their own.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::dump_file::{refused_error, META_CAP};
use super::error::{DumpError, Magic};
use super::META_FILE;
use cupmon_files::replace_file;

pub const META_MAGIC: [u8; 8] = *b"CUPMMETA";
pub const META_VERSION: u32 = 2;
pub const META_HEADER_LEN: usize = 16;

/// The session description of a dump. JSON keys are kept in a map so that unknown keys
/// survive a read-modify-write.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetaFile {
    json: Map<String, Value>,
}

impl MetaFile {
    /// An empty meta (no keys).
    pub fn new() -> Self {
        Self::default()
    }

    pub fn from_json(json: Map<String, Value>) -> Self {
        Self { json }
    }

    pub fn json(&self) -> &Map<String, Value> {
        &self.json
    }

    pub fn json_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.json
    }

    /// Set a key (e.g. `cupti_library`, `dropped_records`, `cupmon_version`).
    pub fn set(&mut self, key: &str, value: impl Into<Value>) -> &mut Self {
        self.json.insert(key.to_owned(), value.into());
        self
    }

    fn u64_key(&self, key: &str) -> Option<u64> {
        self.json.get(key).and_then(Value::as_u64)
    }

    fn str_key(&self, key: &str) -> Option<&str> {
        self.json.get(key).and_then(Value::as_str)
    }

    /// `cuptiGetVersion`'s API version (130001 for CUPTI 13.0 update 1).
    pub fn cupti_version(&self) -> Option<u32> {
        self.u64_key("cupti_version")
            .and_then(|v| u32::try_from(v).ok())
    }

    /// Enabled CUPTI activity kinds.
    pub fn activities(&self) -> Vec<u32> {
        let list = self.json.get("activities").and_then(Value::as_array);
        list.into_iter()
            .flatten()
            .filter_map(|v| v.as_u64().and_then(|v| u32::try_from(v).ok()))
            .collect()
    }

    /// Size of each activity buffer handed to CUPTI: no chunk can be larger.
    pub fn buffer_size(&self) -> Option<u64> {
        self.u64_key("buffer_size")
    }

    /// The dump's id (`dump_id`, 16 hex digits), which its segments and digests carry;
    /// `None` in a dump of a cupmon before the seal, or of PyTorch's monitor.
    pub fn dump_id(&self) -> Option<super::DumpId> {
        self.str_key("dump_id").and_then(super::DumpId::parse)
    }

    pub fn pid(&self) -> Option<u64> {
        self.u64_key("pid")
    }

    pub fn session_start_unix_ns(&self) -> Option<u64> {
        self.u64_key("session_start_unix_ns")
    }

    pub fn session_start_cupti_ns(&self) -> Option<u64> {
        self.u64_key("session_start_cupti_ns")
    }

    pub fn session_start_monotonic_ns(&self) -> Option<u64> {
        self.u64_key("session_start_monotonic_ns")
    }

    /// `cupti_default`: record timestamps are CUPTI's default clock (Unix-epoch ns).
    pub fn timestamp_mode(&self) -> Option<&str> {
        self.str_key("timestamp_mode")
    }

    /// Records CUPTI dropped (buffers full), as the meta's last update counted them:
    /// the final count only when the session was closed (see
    /// [`MetaFile::final_dropped_records`]).
    pub fn dropped_records(&self) -> Option<u64> {
        self.u64_key("dropped_records")
    }

    /// `session_open: true`: cupmon's monitor writes it while recording and clears it in
    /// the meta it writes when the session stops. Still true in a dump means the
    /// process ended without stopping (killed, or it crashed). Dumps without the key
    /// (PyTorch's monitor, older cupmon) read as closed.
    pub fn session_open(&self) -> bool {
        self.json.get("session_open").and_then(Value::as_bool) == Some(true)
    }

    /// Chunks the writer says it wrote (as of the meta's last update).
    pub fn chunks_written(&self) -> Option<u64> {
        self.u64_key("chunks_written")
    }

    /// The number of records CUPTI dropped, or why the dump cannot say.
    pub fn final_dropped_records(&self) -> Result<u64, String> {
        if self.session_open() {
            return Err(super::warning::SESSION_OPEN.to_owned());
        }
        self.dropped_records().ok_or_else(|| {
            "the meta has no dropped_records key (PyTorch's CUPTI monitor does not write one)"
                .to_owned()
        })
    }

    /// Path of the libcupti that recorded the dump (cupmon's key).
    pub fn cupti_library(&self) -> Option<&str> {
        self.str_key("cupti_library")
    }

    /// Version of the cupmon that wrote the dump (cupmon's key).
    pub fn cupmon_version(&self) -> Option<&str> {
        self.str_key("cupmon_version")
    }

    /// Parse a meta file's bytes; `file` names it in errors.
    pub fn from_bytes(bytes: &[u8], file: &str) -> Result<Self, DumpError> {
        let Some(header) = bytes.first_chunk::<META_HEADER_LEN>() else {
            let n = bytes.len();
            let problem = if n == 0 {
                "empty file (0 bytes), expected a 16-byte CUPMMETA header".to_owned()
            } else {
                format!("{n} bytes, too short for the 16-byte CUPMMETA header")
            };
            return Err(DumpError::meta(file, problem));
        };
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&header[..8]);
        if magic != META_MAGIC {
            let problem = format!("byte 0: bad magic {}, expected b\"CUPMMETA\"", Magic(magic));
            return Err(DumpError::meta(file, problem));
        }
        let version = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
        if version != META_VERSION {
            let problem = format!("byte 8: unsupported meta version {version}, expected 2");
            return Err(DumpError::meta(file, problem));
        }
        let len = u32::from_le_bytes([header[12], header[13], header[14], header[15]]);
        let payload = &bytes[META_HEADER_LEN..];
        if u64::from(len) != payload.len() as u64 {
            let problem = format!(
                "byte 12: payload length {len}, but {} bytes follow the header",
                payload.len()
            );
            return Err(DumpError::meta(file, problem));
        }
        let value: Value = serde_json::from_slice(payload).map_err(|e| {
            DumpError::meta(file, format!("byte 16: payload is not valid JSON: {e}"))
        })?;
        match value {
            Value::Object(json) => Ok(Self { json }),
            other => Err(DumpError::meta(
                file,
                format!("byte 16: payload is JSON but not an object: {other}"),
            )),
        }
    }

    /// Read `cupti_monitor_meta.bin` from `path`.
    pub fn read(path: impl AsRef<Path>) -> Result<Self, DumpError> {
        let path = path.as_ref();
        let name = file_label(path, META_FILE);
        let bytes =
            cupmon_files::read_capped(path, META_CAP).map_err(|e| refused_error(&name, e))?;
        Self::from_bytes(&bytes, &name)
    }

    /// The file's bytes: header, then compact JSON (keys in the map's order).
    pub fn to_bytes(&self) -> Vec<u8> {
        let payload = serde_json::to_vec(&self.json).unwrap_or_else(|_| b"{}".to_vec());
        let mut out = Vec::with_capacity(META_HEADER_LEN + payload.len());
        out.extend_from_slice(&META_MAGIC);
        out.extend_from_slice(&META_VERSION.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }

    /// Write to `path` through a temporary file and a rename, so a reader (or a crash)
    /// never sees half a meta file. No fsync: the monitor rewrites the meta at each
    /// window end, and an fsync there could stall the program for as long as the
    /// filesystem takes to write out everything else that is dirty.
    ///
    /// A rewrite that fails leaves the meta before it in place. When the disk is full,
    /// the temporary file is emptied and renamed `<meta>.disk-full` (neither needs a
    /// free block), so that a reader can say why the meta's session still reads as
    /// open; the next rewrite that succeeds removes it.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), DumpError> {
        let path = path.as_ref();
        let name = file_label(path, META_FILE);
        match replace_file(path, &self.to_bytes()) {
            Ok(()) => {
                // Nothing to remove is the common case.
                let _ = fs::remove_file(meta_side_path(path, DISK_FULL_SUFFIX));
                Ok(())
            }
            Err(e) => {
                if cupmon_files::is_disk_full(&e) {
                    mark_disk_full(path);
                }
                Err(DumpError::io(&name, e))
            }
        }
    }
}

/// `cupti_monitor_meta.bin.tmp`: the meta being rewritten.
pub const META_TMP_SUFFIX: &str = ".tmp";
/// `cupti_monitor_meta.bin.disk-full`: a rewrite of the meta failed on a full disk.
pub const DISK_FULL_SUFFIX: &str = ".disk-full";

/// The meta's path with `suffix` added to its name.
pub(crate) fn meta_side_path(meta: &Path, suffix: &str) -> PathBuf {
    let mut side = meta.as_os_str().to_owned();
    side.push(suffix);
    PathBuf::from(side)
}

/// Leave the mark of a rewrite the full disk refused (see [`MetaFile::write`]).
fn mark_disk_full(meta: &Path) {
    let tmp = meta_side_path(meta, META_TMP_SUFFIX);
    // Give back the blocks the cut rewrite took (a failure changes nothing below).
    let _: io::Result<()> = fs::OpenOptions::new()
        .write(true)
        .open(&tmp)
        .and_then(|f| f.set_len(0));
    // Without the mark, the temporary file (if any) still tells a reader that a
    // rewrite was cut off.
    let _: io::Result<()> = fs::rename(&tmp, meta_side_path(meta, DISK_FULL_SUFFIX));
}

/// Why the meta at `path` may be older than the process's last update of it: a
/// rewrite that failed on a full disk, or one cut off (a temporary file left). `None`
/// when neither is there.
pub(crate) fn failed_update(path: &Path) -> Option<String> {
    let label = |suffix: &str| format!("{}{suffix}", file_label(path, META_FILE));
    if fs::symlink_metadata(meta_side_path(path, DISK_FULL_SUFFIX)).is_ok() {
        return Some(format!(
            "the disk was full: {} marks the rewrite that failed",
            label(DISK_FULL_SUFFIX)
        ));
    }
    let tmp = meta_side_path(path, META_TMP_SUFFIX);
    fs::symlink_metadata(&tmp).ok()?;
    // Read by the rule: the temporary file is as open to planting as the meta.
    let what = match cupmon_files::read_capped(&tmp, META_CAP) {
        Ok(bytes) if bytes.is_empty() => "empty".to_owned(),
        Ok(bytes) if bytes.iter().all(|&b| b == 0) => format!("{} zero bytes", bytes.len()),
        Ok(bytes) => match MetaFile::from_bytes(&bytes, META_FILE) {
            Ok(_) => format!("a whole meta of {} bytes, not renamed", bytes.len()),
            Err(_) => format!("{} bytes, cut short", bytes.len()),
        },
        Err(e) => e.problem(),
    };
    Some(format!(
        "{} is {what}: the disk was full, or the process was killed while writing it",
        label(META_TMP_SUFFIX)
    ))
}

/// The file name to show in messages: the path's last component, or `default`.
pub(crate) fn file_label(path: &Path, default: &str) -> String {
    path.file_name()
        .map_or_else(|| default.to_owned(), |n| n.to_string_lossy().into_owned())
}
