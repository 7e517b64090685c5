//! One module per subcommand, named as clap names it (`export-parquet` is
//! `export_parquet.rs`); each returns the process exit code. Helpers only one
//! subcommand uses sit in its folder (`run/`, `stats/`), those several use in
//! `shared/`. `cmd_folder_lists_exactly_the_subcommands` keeps this true.

pub mod combine;
pub mod decode;
pub mod demo;
pub mod export;
pub mod export_parquet;
pub mod merge;
pub mod report;
pub mod run;
pub mod sql;
pub mod stats;
pub mod status;
pub mod window;

mod shared;

pub use shared::dump_arg::{check_dump_dir, dumps_in};
pub use shared::output_check::{check_output, check_output_name, Input, Writes};
pub use shared::trace_written::{export_trace, note_if_spooled, print_written, say_written};

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use clap::CommandFactory;

    /// Each entry of `src/cmd/` is a subcommand (a file, or the folder of its
    /// own helpers) or `shared/`; each subcommand has its file.
    #[test]
    fn cmd_folder_lists_exactly_the_subcommands() {
        let subcommands: BTreeSet<String> = crate::cli::Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().replace('-', "_"))
            .collect();
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cmd");
        let mut files = BTreeSet::new();
        let mut strays = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if subcommands.contains(&name) {
                    if path.join("mod.rs").is_file() {
                        files.insert(name);
                    }
                } else if name != "shared" {
                    strays.push(format!("{name}/"));
                }
            } else if let Some(stem) = name.strip_suffix(".rs") {
                if stem == "mod" {
                    continue;
                }
                if subcommands.contains(stem) {
                    files.insert(stem.to_string());
                } else {
                    strays.push(name);
                }
            } else {
                strays.push(name);
            }
        }
        let missing: Vec<&String> = subcommands.difference(&files).collect();
        assert!(
            strays.is_empty() && missing.is_empty(),
            "{}: entries that are no subcommand (move helpers into the subcommand's folder or \
             shared/): {strays:?}; subcommands without their file: {missing:?}",
            dir.display()
        );
    }
}
