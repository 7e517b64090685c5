//! The Python stacks that launched kernels: two side files, written by the monitor
//! while it runs, read here.
//!
//! - `python_stacks.jsonl`: the interned frames and stacks, a line each as they first
//!   appear (`{"frame":3,"file":"train.py","function":"step","line":42}` with
//!   `"origin":"torch"|"triton"|"cupmon"` for library frames; `{"stack":7,"frames":[3,1]}`,
//!   innermost frame first, `"truncated":true` when outer frames were left out,
//!   `"backward":true` for the backward of the forward op those frames launched: the
//!   autograd engine's kernels, tied to their forward op by torch's sequence numbers
//!   under `emit_nvtx`), and
//!   `{"node":94412,"stack":7}` for a CUDA-graph node (CUPTI's node id, which every
//!   replayed kernel's record carries as `graphNodeId`: the stack that created the node
//!   during capture). Stack 0 is a launch from a thread without Python frames.
//! - the launch → stack pairs: a file per segment (`launch_stacks.rs` says where and
//!   how), retired with its segment.
//!
//! Both are read by the side-file rule (capped, bad lines skipped and counted). A
//! correlation id given twice (CUPTI's ids wrap after 2^32 API calls) is ambiguous: its
//! kernels are left unattributed and counted, never given the wrong stack.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use cupmon_files::GIB;
use serde::{Deserialize, Serialize};

use super::dump_file::read_side_file;
use super::launch_stacks::read_launch_pairs;
use super::side_lines::parse_lines;
use super::warning::DumpWarning;

pub const PYTHON_STACKS_FILE: &str = "python_stacks.jsonl";
/// `python_stacks.jsonl`: a line per distinct frame and stack (a few hundred bytes).
pub const PYTHON_STACKS_CAP: u64 = GIB;
/// The stack of a launch from a thread without Python frames.
pub const NO_PYTHON_STACK: u32 = 0;
/// Before a backward stack's source line.
pub const BACKWARD_OF: &str = "backward of ";
/// The first line of a backward stack's text (its frames are the forward op's).
const BACKWARD_STACK_NOTE: &str =
    "(backward, run by the autograd engine; the forward op's stack by its sequence number:)";

/// One source position of a stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackFrame {
    pub file: String,
    pub function: String,
    pub line: i32,
    /// `torch`, `triton` or `cupmon` for their frames; `None`: the user's code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl StackFrame {
    pub fn is_user(&self) -> bool {
        self.origin.is_none()
    }
}

/// One line of `python_stacks.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StackLine {
    Frame {
        frame: u32,
        #[serde(flatten)]
        at: StackFrame,
    },
    Stack {
        stack: u32,
        frames: Vec<u32>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        truncated: bool,
        /// Older readers ignore the field and show the forward's line.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        backward: bool,
    },
    Node {
        node: u64,
        stack: u32,
    },
}

impl StackLine {
    /// The line as written (with its newline).
    pub fn to_line(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec(self).unwrap_or_default();
        out.push(b'\n');
        out
    }
}

/// What a launch's stack is, as far as the dump knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchStack {
    /// Launched from a thread without Python frames.
    NoPython,
    Stack(u32),
}

/// The dump's stacks and the launches that name them.
#[derive(Debug, Clone, Default)]
pub struct StackTable {
    frames: HashMap<u32, StackFrame>,
    stacks: HashMap<u32, (Vec<u32>, bool)>,
    /// Stacks that stand for the backward of their frames' forward op.
    backward: HashSet<u32>,
    launches: HashMap<u32, u32>,
    /// Graph node id → the stack that created the node.
    nodes: HashMap<u64, u32>,
    /// Correlation ids given more than once: not attributed.
    ambiguous: u64,
    warnings: Vec<DumpWarning>,
}

impl StackTable {
    /// Reads `dir`'s two files; missing files make an empty table.
    pub fn read(dir: &Path) -> StackTable {
        let mut t = StackTable::default();
        let lost = "the Python stacks of the kernels (stats --by-line, trace stack args)";
        if let Some(bytes) = read_side_file(
            &dir.join(PYTHON_STACKS_FILE),
            PYTHON_STACKS_FILE,
            PYTHON_STACKS_CAP,
            lost,
            &mut t.warnings,
        ) {
            let (frames, stacks, nodes, backward) =
                (&mut t.frames, &mut t.stacks, &mut t.nodes, &mut t.backward);
            let w = parse_lines(&bytes, PYTHON_STACKS_FILE, |line| {
                match serde_json::from_str::<StackLine>(line).map_err(|e| e.to_string())? {
                    StackLine::Frame { frame, at } => {
                        frames.insert(frame, at);
                    }
                    StackLine::Stack {
                        stack,
                        frames: f,
                        truncated,
                        backward: b,
                    } => {
                        stacks.insert(stack, (f, truncated));
                        if b {
                            backward.insert(stack);
                        }
                    }
                    StackLine::Node { node, stack } => {
                        nodes.insert(node, stack);
                    }
                }
                Ok(())
            });
            t.warnings.extend(w);
        }
        let pairs = read_launch_pairs(dir, &mut t.warnings);
        t.launches = pairs.launches;
        t.ambiguous = pairs.ambiguous;
        t
    }

    /// Whether `dir` holds Python stacks (the table is written before any launch
    /// that names it).
    pub fn present(dir: &Path) -> bool {
        dir.join(PYTHON_STACKS_FILE).is_file()
    }

    pub fn is_empty(&self) -> bool {
        self.launches.is_empty() && self.nodes.is_empty()
    }

    /// The stack of a kernel, copy or memset: by its graph node (`graph_node_id` not 0:
    /// the line that created the node in capture), else by its launch.
    pub fn gpu_op(&self, corr: u32, graph_node_id: u64) -> Option<LaunchStack> {
        if graph_node_id != 0 {
            if let Some(&stack) = self.nodes.get(&graph_node_id) {
                return Some(match stack {
                    NO_PYTHON_STACK => LaunchStack::NoPython,
                    id => LaunchStack::Stack(id),
                });
            }
        }
        self.launch(corr)
    }

    /// The stack that launched the work of correlation id `corr`.
    pub fn launch(&self, corr: u32) -> Option<LaunchStack> {
        match *self.launches.get(&corr)? {
            NO_PYTHON_STACK => Some(LaunchStack::NoPython),
            id => Some(LaunchStack::Stack(id)),
        }
    }

    /// Stack `id`'s frames, innermost first (unknown frames left out), and whether
    /// outer frames were cut.
    pub fn frames(&self, id: u32) -> Option<(Vec<&StackFrame>, bool)> {
        let (ids, truncated) = self.stacks.get(&id)?;
        Some((
            ids.iter().filter_map(|f| self.frames.get(f)).collect(),
            *truncated,
        ))
    }

    /// The innermost frame of stack `id` that is the user's code (not torch's,
    /// Triton's or cupmon's); the innermost frame when all are libraries'.
    pub fn user_frame(&self, id: u32) -> Option<&StackFrame> {
        let (frames, _) = self.frames(id)?;
        frames
            .iter()
            .find(|f| f.is_user())
            .or(frames.first())
            .copied()
    }

    /// Whether stack `id` stands for the backward of its frames' forward op (a kernel
    /// of the autograd engine, tied to the forward op by torch's sequence number).
    pub fn is_backward(&self, id: u32) -> bool {
        self.backward.contains(&id)
    }

    /// Stack `id`'s source line as views show it: `file:line` of its innermost user
    /// frame, `backward of file:line` for a backward stack.
    pub fn source_line(&self, id: u32) -> Option<String> {
        let f = self.user_frame(id)?;
        Some(if self.is_backward(id) {
            format!("{BACKWARD_OF}{}:{}", f.file, f.line)
        } else {
            format!("{}:{}", f.file, f.line)
        })
    }

    /// A launch's source line ([`Self::source_line`]) and its whole stack as text (a
    /// frame a line, innermost first, library frames marked; a backward stack says so
    /// first), for the args of a GPU op in a trace.
    pub fn launch_text(&self, corr: u32, graph_node_id: u64) -> Option<(String, String)> {
        let id = match self.gpu_op(corr, graph_node_id)? {
            LaunchStack::NoPython => {
                return Some((
                    "(no Python frames)".to_owned(),
                    "(launched from a thread without Python frames)".to_owned(),
                ))
            }
            LaunchStack::Stack(id) => id,
        };
        let line = self.source_line(id)?;
        let (frames, truncated) = self.frames(id)?;
        let mut stack = String::new();
        if self.is_backward(id) {
            stack.push_str(BACKWARD_STACK_NOTE);
        }
        for f in frames {
            if !stack.is_empty() {
                stack.push('\n');
            }
            stack.push_str(&format!("{}:{} {}", f.file, f.line, f.function));
            if let Some(origin) = &f.origin {
                stack.push_str(&format!(" [{origin}]"));
            }
        }
        if truncated {
            stack.push_str("\n...");
        }
        Some((line, stack))
    }

    /// Launches whose correlation id was given twice (not attributed).
    pub fn ambiguous(&self) -> u64 {
        self.ambiguous
    }

    pub fn warnings(&self) -> &[DumpWarning] {
        &self.warnings
    }

    pub fn stack_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.stacks.keys().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dump::launch_stacks::{launch_entries, launch_stacks_header, LAUNCH_STACKS_FILE};

    fn write(dir: &Path, lines: &[StackLine], pairs: &[(u32, u32)], tail: &[u8]) {
        let mut table = Vec::new();
        for l in lines {
            table.extend(l.to_line());
        }
        std::fs::write(dir.join(PYTHON_STACKS_FILE), table).unwrap();
        let mut bin = launch_stacks_header();
        bin.extend(launch_entries(pairs));
        bin.extend_from_slice(tail);
        std::fs::write(dir.join(LAUNCH_STACKS_FILE), bin).unwrap();
    }

    fn frame(id: u32, file: &str, line: i32, origin: Option<&str>) -> StackLine {
        StackLine::Frame {
            frame: id,
            at: StackFrame {
                file: file.into(),
                function: "f".into(),
                line,
                origin: origin.map(Into::into),
            },
        }
    }

    #[test]
    fn a_launch_finds_its_user_line_under_library_frames() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [
            frame(1, "/t/torch/nn/linear.py", 125, Some("torch")),
            frame(2, "train.py", 42, None),
            StackLine::Stack {
                stack: 1,
                frames: vec![1, 2],
                truncated: false,
                backward: false,
            },
        ];
        write(dir.path(), &lines, &[(10, 1), (11, 0)], &[]);
        let t = StackTable::read(dir.path());
        assert!(t.warnings().is_empty(), "{:?}", t.warnings());
        assert_eq!(t.launch(10), Some(LaunchStack::Stack(1)));
        assert_eq!(t.launch(11), Some(LaunchStack::NoPython));
        assert_eq!(t.launch(12), None);
        assert_eq!(
            t.user_frame(1).map(|f| (f.file.as_str(), f.line)),
            Some(("train.py", 42))
        );
    }

    #[test]
    fn a_backward_stack_names_its_forward_line_marked_backward() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [
            frame(1, "/t/torch/nn/linear.py", 125, Some("torch")),
            frame(2, "train.py", 42, None),
            StackLine::Stack {
                stack: 1,
                frames: vec![1, 2],
                truncated: false,
                backward: false,
            },
            StackLine::Stack {
                stack: 2,
                frames: vec![1, 2],
                truncated: false,
                backward: true,
            },
        ];
        write(dir.path(), &lines, &[(10, 1), (11, 2)], &[]);
        let t = StackTable::read(dir.path());
        assert!(t.warnings().is_empty(), "{:?}", t.warnings());
        assert!(!t.is_backward(1) && t.is_backward(2));
        assert_eq!(t.source_line(1).as_deref(), Some("train.py:42"));
        assert_eq!(t.source_line(2).as_deref(), Some("backward of train.py:42"));
        let (line, stack) = t.launch_text(11, 0).unwrap();
        assert_eq!(line, "backward of train.py:42");
        assert!(stack.starts_with("(backward"), "{stack}");
        assert!(stack.ends_with("train.py:42 f"), "{stack}");
        let (line, stack) = t.launch_text(10, 0).unwrap();
        assert_eq!(line, "train.py:42");
        assert!(stack.starts_with("/t/torch"), "{stack}");
        // As written by the monitor, and read back.
        let written = String::from_utf8(lines[3].to_line()).unwrap();
        assert_eq!(
            written,
            "{\"stack\":2,\"frames\":[1,2],\"backward\":true}\n"
        );
        let forward = String::from_utf8(lines[2].to_line()).unwrap();
        assert!(!forward.contains("backward"), "{forward}");
    }

    #[test]
    fn a_cut_entry_and_a_bad_line_are_skipped_and_said() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &[frame(1, "a.py", 1, None)],
            &[(1, 1)],
            &[1, 2, 3],
        );
        let mut table = std::fs::read(dir.path().join(PYTHON_STACKS_FILE)).unwrap();
        table.splice(0..0, b"not json\n".iter().copied());
        std::fs::write(dir.path().join(PYTHON_STACKS_FILE), table).unwrap();
        let t = StackTable::read(dir.path());
        assert_eq!(t.launch(1), Some(LaunchStack::Stack(1)));
        assert_eq!(t.warnings().len(), 2, "{:?}", t.warnings());
    }

    #[test]
    fn a_wrapped_correlation_id_is_left_unattributed() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &[],
            &[(5, 1), (6, 2), (6, 2), (5, 3), (5, 1)],
            &[],
        );
        let t = StackTable::read(dir.path());
        assert_eq!(t.launch(5), None);
        assert_eq!(
            t.launch(6),
            Some(LaunchStack::Stack(2)),
            "a graph launch's kernels"
        );
        assert_eq!(t.ambiguous(), 1);
    }

    #[test]
    fn a_graph_kernel_takes_its_nodes_stack_over_its_launchs() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [StackLine::Node { node: 77, stack: 4 }];
        write(dir.path(), &lines, &[(9, 2)], &[]);
        let t = StackTable::read(dir.path());
        assert_eq!(t.gpu_op(9, 77), Some(LaunchStack::Stack(4)));
        assert_eq!(
            t.gpu_op(9, 78),
            Some(LaunchStack::Stack(2)),
            "unknown node: the launch"
        );
        assert_eq!(t.gpu_op(9, 0), Some(LaunchStack::Stack(2)));
    }

    #[test]
    fn a_foreign_launch_file_is_refused_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(LAUNCH_STACKS_FILE), b"GARBAGE!\x01\0\0\0").unwrap();
        let t = StackTable::read(dir.path());
        assert!(t.is_empty());
        assert_eq!(t.warnings().len(), 1);
    }
}
