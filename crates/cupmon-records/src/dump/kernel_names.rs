//! `kernel_names.tsv`: `pointer<TAB>mangled name`, one line per distinct kernel-name
//! pointer (pointer in decimal). Kernel records hold a `const char *` into the recording
//! process; this table is how a dump keeps the names. The writer appends a line per new
//! pointer, so a kill can cut the last line: it is skipped with a warning, and so are
//! bad lines before it, counted ([`KernelNameTable::warnings`]).

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;

use super::dump_file::{read_side_file, KERNEL_NAMES_CAP};
use super::error::DumpError;
use super::meta::file_label;
use super::side_lines::parse_lines;
use super::warning::DumpWarning;
use super::KERNEL_NAMES_FILE;
use cupmon_files::replace_file;

/// Kernel-name pointer -> mangled name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelNameTable {
    names: HashMap<u64, String>,
    /// What reading the file skipped: bad lines, a damaged last line, or the whole
    /// file when it was refused.
    warnings: Vec<DumpWarning>,
}

impl KernelNameTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parse the file's text; `file` names it in messages. Empty lines are skipped;
    /// bad lines and a damaged last line are skipped and said in
    /// [`KernelNameTable::warnings`].
    pub fn parse(text: &str, file: &str) -> Self {
        let mut names = HashMap::new();
        let warnings = parse_lines(text.as_bytes(), file, |line| {
            let Some((ptr, name)) = line.split_once('\t') else {
                return Err(format!("no TAB between pointer and name in {line:?}"));
            };
            let ptr: u64 = ptr
                .parse()
                .map_err(|_| format!("pointer {ptr:?} is not a decimal u64"))?;
            names.insert(ptr, name.to_owned());
            Ok(())
        });
        Self { names, warnings }
    }

    /// What reading skipped (warnings to print): bad lines, a damaged last line, a
    /// file that was not read.
    pub fn warnings(&self) -> &[DumpWarning] {
        &self.warnings
    }

    /// Read `path`; a missing file gives an empty table (dumps may lack side files),
    /// and so does one refused by the rule every dump file is read by (a FIFO, a
    /// device, a planted link, a file past [`KERNEL_NAMES_CAP`]), with its warning.
    pub fn read(path: impl AsRef<Path>) -> Self {
        let path = path.as_ref();
        let name = file_label(path, KERNEL_NAMES_FILE);
        let mut warnings = Vec::new();
        let lost = "kernels are named by their name pointers";
        match read_side_file(path, &name, KERNEL_NAMES_CAP, lost, &mut warnings) {
            Some(bytes) => Self::parse(&String::from_utf8_lossy(&bytes), &name),
            None => Self {
                names: HashMap::new(),
                warnings,
            },
        }
    }

    /// The mangled name recorded for `ptr`.
    pub fn get(&self, ptr: u64) -> Option<&str> {
        self.names.get(&ptr).map(String::as_str)
    }

    /// Add a name; returns true when the pointer was new (and so should be written).
    pub fn insert(&mut self, ptr: u64, name: impl Into<String>) -> bool {
        use std::collections::hash_map::Entry;
        match self.names.entry(ptr) {
            Entry::Vacant(v) => {
                v.insert(name.into());
                true
            }
            Entry::Occupied(_) => false,
        }
    }

    pub fn contains(&self, ptr: u64) -> bool {
        self.names.contains_key(&ptr)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// `(pointer, name)` pairs sorted by pointer.
    pub fn sorted(&self) -> Vec<(u64, &str)> {
        let mut v: Vec<_> = self.names.iter().map(|(&p, n)| (p, n.as_str())).collect();
        v.sort_unstable_by_key(|&(p, _)| p);
        v
    }

    /// Write the whole table, sorted by pointer (the fixtures' order).
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        for (ptr, name) in self.sorted() {
            write_line(out, ptr, name)?;
        }
        Ok(())
    }

    /// Write the whole table to `path` (through a temporary file and a rename).
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), DumpError> {
        let path = path.as_ref();
        let mut out = Vec::new();
        self.write_to(&mut out)
            .map_err(|e| DumpError::io(KERNEL_NAMES_FILE, e))?;
        replace_file(path, &out).map_err(|e| DumpError::io(&file_label(path, KERNEL_NAMES_FILE), e))
    }
}

/// One line of `kernel_names.tsv` (for writers that append names as they first appear).
/// TABs and newlines in a name (never seen in symbol names) become spaces.
pub fn write_line(out: &mut impl Write, ptr: u64, name: &str) -> io::Result<()> {
    if name.contains(['\t', '\n', '\r']) {
        let clean = name.replace(['\t', '\n', '\r'], " ");
        writeln!(out, "{ptr}\t{clean}")
    } else {
        writeln!(out, "{ptr}\t{name}")
    }
}
