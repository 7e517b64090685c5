//! Which dump the monitor writes: cupmon's compressed segments within a budget (the
//! default), or PyTorch's single raw-buffer file (`--raw`), which stops at the budget.

use std::path::Path;

use cupmon_records::dump::SegmentPolicy;
use cupmon_records::{DumpWriter, MetaFile};

use crate::{MonitorConfig, MonitorError};

/// Create the dump directory and its writer, recording the budget and layout in
/// `meta` (the session's, so later rewrites keep them).
pub(crate) fn create_dump(
    config: &MonitorConfig,
    meta: &mut MetaFile,
) -> Result<DumpWriter, MonitorError> {
    let keep = budget(config);
    meta.set("keep_bytes", keep);
    if let Some(d) = config.keep_for {
        meta.set("keep_for_s", d.as_secs());
    }
    if config.raw {
        meta.set("layout", "raw");
        return Ok(DumpWriter::create_raw(&config.dump_dir, meta, Some(keep))?);
    }
    meta.set("layout", "segments");
    let policy = SegmentPolicy {
        segment_size: config.segment_size,
        segment_period: config.segment_period,
        keep,
        keep_for: config.keep_for,
    };
    Ok(DumpWriter::create_segmented(
        &config.dump_dir,
        meta,
        policy,
    )?)
}

/// `--keep`, or the default: 10 GiB or a tenth of the free space, whichever is smaller.
pub(crate) fn budget(config: &MonitorConfig) -> u64 {
    config
        .keep
        .unwrap_or_else(|| cupmon_config::default_keep(free_space(&config.dump_dir)))
}

/// Free bytes (for unprivileged users) on the file system that holds `dir`, or its
/// nearest existing ancestor.
fn free_space(dir: &Path) -> Option<u64> {
    let existing = dir.ancestors().find(|p| p.exists())?;
    let st = nix::sys::statvfs::statvfs(existing).ok()?;
    Some(st.blocks_available() as u64 * st.fragment_size() as u64)
}
