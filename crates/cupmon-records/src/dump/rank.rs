//! Which rank of a distributed job a dump belongs to, for every reader (traces,
//! report, Parquet): the meta says (`rank`, from torchrun's `RANK`, or
//! `distributedInfo.rank`), else the directory's name does (`rank<R>-<pid>-<start>`,
//! as `cupmon run` names the dumps of a launcher's ranks, and as users name copies
//! of PyTorch's dumps).

use std::path::Path;

use serde_json::Value;

use super::{Dump, MetaFile};

/// The rank in a dump directory's name: `rank3-4242-20261201T093005Z` -> 3.
pub fn rank_in_dir_name(dir: &Path) -> Option<i64> {
    let name = dir.file_name()?.to_str()?;
    let (rank, _rest) = name.strip_prefix("rank")?.split_once('-')?;
    if rank.is_empty() || !rank.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rank.parse().ok()
}

/// The pid in a dump directory's name: `rank3-4242-...` or `4242-...` (or `4242`).
pub fn pid_in_dir_name(dir: &Path) -> Option<i64> {
    let name = dir.file_name()?.to_str()?;
    let rest = match rank_in_dir_name(dir) {
        Some(_) => name.split_once('-')?.1,
        None => name,
    };
    rest.split('-').next()?.parse().ok()
}

/// An integer, or a string holding one (the meta's `rank` is the `RANK` text).
fn int(v: Option<&Value>) -> Option<i64> {
    let v = v?;
    v.as_i64().or_else(|| v.as_str()?.trim().parse().ok())
}

impl MetaFile {
    /// The rank the meta records: `rank`, else `distributedInfo.rank`.
    pub fn rank(&self) -> Option<i64> {
        let json = self.json();
        int(json.get("rank")).or_else(|| int(json.get("distributedInfo")?.get("rank")))
    }

    /// The job's number of ranks, when the meta records it (`distributedInfo`).
    pub fn world_size(&self) -> Option<i64> {
        int(self.json().get("distributedInfo")?.get("world_size"))
    }
}

impl Dump {
    /// The dump's rank: the meta's, else its directory name's (see the module).
    pub fn rank(&self) -> Option<i64> {
        self.meta().rank().or_else(|| rank_in_dir_name(self.dir()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_and_pids_of_dump_directory_names() {
        let cases = [
            ("rank3-4242-20261201T093005Z", Some(3), Some(4242)),
            ("rank0-17", Some(0), Some(17)),
            ("4242-20261201T093005Z-1", None, Some(4242)),
            ("4242", None, Some(4242)),
            ("rankings-12", None, None),
            ("rank-12", None, None),
            ("torch_mlp", None, None),
        ];
        for (name, rank, pid) in cases {
            let dir = Path::new("/x").join(name);
            assert_eq!(rank_in_dir_name(&dir), rank, "{name}");
            assert_eq!(pid_in_dir_name(&dir), pid, "{name}");
        }
    }

    #[test]
    fn the_meta_rank_is_its_rank_else_its_distributed_info() {
        let meta = |v: Value| MetaFile::from_json(v.as_object().unwrap().clone());
        let m =
            meta(serde_json::json!({"rank": "2", "distributedInfo": {"rank": 5, "world_size": 8}}));
        assert_eq!((m.rank(), m.world_size()), (Some(2), Some(8)));
        let m = meta(serde_json::json!({"distributedInfo": {"rank": 5, "world_size": 8}}));
        assert_eq!(m.rank(), Some(5));
        let m = meta(serde_json::json!({"pid": 1}));
        assert_eq!((m.rank(), m.world_size()), (None, None));
    }
}
