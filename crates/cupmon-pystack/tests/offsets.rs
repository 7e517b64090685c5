//! The layouts in `src/layout.rs` against each CPython's own headers: `offsets.c` is
//! compiled against the headers of every CPython 3.11-3.13 found (python3, pyenv's
//! versions) and its `offsetof`s compared. SKIPPED without a C compiler or headers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use cupmon_pystack::layout::{self, FramePath};

fn interpreters() -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from("python3")];
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pyenv")));
    if let Some(Ok(versions)) = pyenv.map(|p| std::fs::read_dir(p.join("versions"))) {
        let mut found: Vec<PathBuf> = versions
            .flatten()
            .map(|e| e.path().join("bin/python3"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        out.extend(found);
    }
    out
}

/// `(major, minor, include dir)` of a CPython.
fn describe(python: &Path) -> Option<(u8, u8, PathBuf)> {
    let o = Command::new(python)
        .args([
            "-c",
            "import sys, sysconfig; print(sys.version_info[0], sys.version_info[1], \
             sysconfig.get_paths()['include'])",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut parts = text.trim().splitn(3, ' ');
    Some((
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
        PathBuf::from(parts.next()?),
    ))
}

/// Compares the layout of CPython 3.`minor` with its headers; `Err` says why it
/// could not (no such CPython with its internal headers, no C compiler).
fn check_version(minor: u8) -> Result<(), String> {
    let major = 3;
    let Some(l) = layout::for_version(major, minor) else {
        return Err(format!(
            "cupmon-pystack has no layout for CPython 3.{minor}"
        ));
    };
    let Some(include) = interpreters().iter().find_map(|python| {
        let (ma, mi, include) = describe(python)?;
        ((ma, mi) == (major, minor) && include.join("internal/pycore_frame.h").is_file())
            .then_some(include)
    }) else {
        return Err(format!(
            "no CPython 3.{minor} with its internal headers (python3, pyenv's versions)"
        ));
    };
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/offsets.c");
    let work = tempfile::tempdir().expect("tempdir");
    let exe = work.path().join(format!("offsets-{major}.{minor}"));
    let Ok(built) = Command::new(&cc)
        .arg(format!("-I{}", include.display()))
        .arg(format!("-I{}", include.join("internal").display()))
        .arg(&source)
        .arg("-o")
        .arg(&exe)
        .output()
    else {
        return Err(format!(
            "no C compiler ({cc}, or $CC) to build tests/offsets.c"
        ));
    };
    assert!(
        built.status.success(),
        "{major}.{minor}: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = Command::new(&exe).output().expect("run offsets");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let got: HashMap<&str, usize> = text
        .lines()
        .filter_map(|line| {
            let (k, v) = line.split_once(' ')?;
            Some((k, v.parse().ok()?))
        })
        .collect();
    let want: Vec<(&str, usize)> = {
        let mut w = vec![
            ("frame.code", l.frame_code),
            ("frame.previous", l.frame_previous),
            ("frame.instr", l.frame_instr),
            ("frame.owner", l.frame_owner),
            ("code.filename", l.code_filename),
            ("code.qualname", l.code_qualname),
            ("code.firstlineno", l.code_firstlineno),
            ("code.code_adaptive", l.code_adaptive),
            ("ascii.size", l.ascii_size),
            ("compact.size", l.compact_size),
            ("ascii.length", layout::UNICODE_LENGTH),
            ("ascii.state", layout::UNICODE_STATE),
            ("object.type", layout::OBJECT_TYPE),
        ];
        match l.tstate_frame {
            FramePath::CFrame {
                cframe,
                current_frame,
            } => {
                w.push(("tstate.cframe", cframe));
                w.push(("cframe.current_frame", current_frame));
            }
            FramePath::Direct(offset) => w.push(("tstate.current_frame", offset)),
        }
        w
    };
    for (key, value) in want {
        assert_eq!(
            got.get(key),
            Some(&value),
            "CPython {major}.{minor}: {key}\n{text}"
        );
    }
    eprintln!("CPython 3.{minor}: layout checked against its headers");
    Ok(())
}

/// Each version its own test, so that one whose headers are not here says SKIPPED
/// (the others still check theirs).
fn check_or_skip(minor: u8) {
    if let Err(why) = check_version(minor) {
        cupmon_test_skip::skipped!("{why}");
    }
}

#[test]
fn the_3_11_offsets_are_its_headers() {
    check_or_skip(11);
}

#[test]
fn the_3_12_offsets_are_its_headers() {
    check_or_skip(12);
}

#[test]
fn the_3_13_offsets_are_its_headers() {
    check_or_skip(13);
}
