//! The launch → stack pairs of a dump (`python_stacks.rs` describes the stacks): 8-byte
//! entries, a launch's correlation id and its stack (both little-endian u32), after the
//! header `CUPMLSTK` and a little-endian u32 version (1), written as the kernels'
//! records arrive (a kill can cut the last entry).
//!
//! A segmented dump keeps them a file per segment, `segments/seg-NNNNNN.stacks`: the
//! pairs of the buffers whose frames went into that segment, counted in the budget and
//! retired with it (one file for the whole dump grew 8 bytes per launch whatever
//! `--keep` said). A raw dump, and dumps from before the split, have one
//! `launch_stacks.bin` beside the meta. Readers take both, every file by the side-file
//! rule, all of them within one cap.

use std::collections::HashMap;
use std::path::Path;

use cupmon_files::GIB;

use super::dump_file::read_side_file;
use super::segment::SEGMENTS_DIR;
use super::warning::DumpWarning;

pub const LAUNCH_STACKS_FILE: &str = "launch_stacks.bin";
pub const LAUNCH_STACKS_MAGIC: &[u8; 8] = b"CUPMLSTK";
pub const LAUNCH_STACKS_VERSION: u32 = 1;
/// All the launch-stack files of a dump together: 8 bytes per launch kept; a day at
/// 10,000 launches/s is 7 GB, more than a budget that also holds those launches' records.
pub const LAUNCH_STACKS_CAP: u64 = 8 * GIB;

const HEADER_LEN: usize = LAUNCH_STACKS_MAGIC.len() + 4;
const LOST: &str = "the Python stacks of the kernels (stats --by-line, trace stack args)";

/// The launch-stack file of `segment`, in `segments/`.
pub fn launch_stacks_file_name(segment: u32) -> String {
    format!("seg-{segment:06}.stacks")
}

/// The segment number of a file named by [`launch_stacks_file_name`].
pub fn parse_launch_stacks_file_name(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("seg-")?.strip_suffix(".stacks")?;
    (digits.len() >= 6 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Encodes launch entries (after a file's header).
pub fn launch_entries(pairs: &[(u32, u32)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(pairs.len() * 8);
    for &(corr, stack) in pairs {
        out.extend_from_slice(&corr.to_le_bytes());
        out.extend_from_slice(&stack.to_le_bytes());
    }
    out
}

/// The header of a launch-stack file.
pub fn launch_stacks_header() -> Vec<u8> {
    let mut out = LAUNCH_STACKS_MAGIC.to_vec();
    out.extend_from_slice(&LAUNCH_STACKS_VERSION.to_le_bytes());
    out
}

/// The launches of a dump and their stacks.
#[derive(Debug, Default)]
pub(crate) struct LaunchPairs {
    pub launches: HashMap<u32, u32>,
    /// Correlation ids given more than once with different stacks: left out.
    pub ambiguous: u64,
}

/// Reads `dir`'s launch-stack files: `launch_stacks.bin`, then `segments/`' files in
/// segment order, until the cap (the files past it are said, not read).
pub(crate) fn read_launch_pairs(dir: &Path, warnings: &mut Vec<DumpWarning>) -> LaunchPairs {
    let mut files = vec![(dir.join(LAUNCH_STACKS_FILE), LAUNCH_STACKS_FILE.to_owned())];
    let mut segments: Vec<u32> = std::fs::read_dir(dir.join(SEGMENTS_DIR))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| parse_launch_stacks_file_name(e.file_name().to_str()?))
        .collect();
    segments.sort_unstable();
    for segment in segments {
        let name = launch_stacks_file_name(segment);
        files.push((
            dir.join(SEGMENTS_DIR).join(&name),
            format!("{SEGMENTS_DIR}/{name}"),
        ));
    }
    let mut pairs = LaunchPairs::default();
    let mut ambiguous: Vec<u32> = Vec::new();
    let mut left = LAUNCH_STACKS_CAP;
    for (path, name) in files {
        let Some(bytes) = read_side_file(&path, &name, left, LOST, warnings) else {
            continue;
        };
        left = left.saturating_sub(bytes.len() as u64);
        read_file(&bytes, &name, &mut pairs.launches, &mut ambiguous, warnings);
    }
    ambiguous.sort_unstable();
    ambiguous.dedup();
    for corr in &ambiguous {
        pairs.launches.remove(corr);
    }
    pairs.ambiguous = ambiguous.len() as u64;
    pairs
}

fn read_file(
    bytes: &[u8],
    name: &str,
    launches: &mut HashMap<u32, u32>,
    ambiguous: &mut Vec<u32>,
    warnings: &mut Vec<DumpWarning>,
) {
    let version = bytes
        .get(8..12)
        .map(|v| u32::from_le_bytes([v[0], v[1], v[2], v[3]]));
    if !bytes.starts_with(LAUNCH_STACKS_MAGIC) || version != Some(LAUNCH_STACKS_VERSION) {
        warnings.push(DumpWarning::Unreadable {
            file: name.to_owned(),
            problem: format!(
                "it does not start with {:?} version {LAUNCH_STACKS_VERSION}",
                String::from_utf8_lossy(LAUNCH_STACKS_MAGIC)
            ),
            lost: "the Python stacks of its kernels".to_owned(),
        });
        return;
    }
    let body = &bytes[HEADER_LEN..];
    for entry in body.chunks_exact(8) {
        let corr = u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]);
        let stack = u32::from_le_bytes([entry[4], entry[5], entry[6], entry[7]]);
        // The kernels of one graph launch share its id: the same pair again.
        if launches.insert(corr, stack).is_some_and(|was| was != stack) {
            ambiguous.push(corr);
        }
    }
    let cut = body.len() % 8;
    if cut != 0 {
        warnings.push(DumpWarning::DamagedLastLine {
            file: name.to_owned(),
            line: body.len() / 8 + 1,
            problem: format!("the last entry is cut ({cut} of 8 bytes)"),
            kept: body.len() / 8,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_files_are_read_in_order_and_a_foreign_one_is_skipped_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let segments = dir.path().join(SEGMENTS_DIR);
        std::fs::create_dir(&segments).unwrap();
        for (segment, pairs) in [(2, [(7, 3)]), (1, [(6, 2)])] {
            let mut bin = launch_stacks_header();
            bin.extend(launch_entries(&pairs));
            std::fs::write(segments.join(launch_stacks_file_name(segment)), bin).unwrap();
        }
        std::fs::write(segments.join(launch_stacks_file_name(3)), b"GARBAGE!").unwrap();
        let mut warnings = Vec::new();
        let pairs = read_launch_pairs(dir.path(), &mut warnings);
        assert_eq!(pairs.launches.get(&6), Some(&2));
        assert_eq!(pairs.launches.get(&7), Some(&3));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0]
            .to_string()
            .contains("segments/seg-000003.stacks"));
    }

    #[test]
    fn file_names_round_trip_and_others_are_not_taken() {
        assert_eq!(
            parse_launch_stacks_file_name(&launch_stacks_file_name(42)),
            Some(42)
        );
        assert_eq!(parse_launch_stacks_file_name("seg-000042.cupmr"), None);
        assert_eq!(parse_launch_stacks_file_name("seg-4x.stacks"), None);
    }
}
