use std::path::PathBuf;

/// What went wrong with a hang record or a diagnosis.
#[derive(Debug, thiserror::Error)]
pub enum HangError {
    #[error("hang record {}: cannot write it: {problem}", path.display())]
    Write { path: PathBuf, problem: String },
    #[error("{}: already holds {max} hang records; no more are written", dir.display())]
    TooMany { dir: PathBuf, max: u32 },
    #[error("hang record {}: not read: {problem}", path.display())]
    Unreadable { path: PathBuf, problem: String },
    #[error("hang record {}: not a hang record: {problem}", path.display())]
    Malformed { path: PathBuf, problem: String },
    #[error("dump {}: {problem}", path.display())]
    Dump { path: PathBuf, problem: String },
    #[error("no dumps to diagnose")]
    NoDumps,
}
