//! Joining launches to their Python stacks: the worker looks each kernel's, copy's and
//! memset's correlation id up among the stacks noted at the launch callbacks
//! (`cupmon_cupti::launch_stack`) and hands the pairs, and the stacks new since the
//! last buffer, to the dump writer (the table a side file, the pairs in the buffer's
//! segment: `cupmon_records::dump::python_stacks`).

use cupmon_records::dump::{StackFrame, StackLine};
use cupmon_records::{DumpError, DumpWriter, Record};

use crate::monitor::lock;
use crate::shared::Shared;
use crate::StateError;

/// Starts noting stacks at the launch callbacks, as deep as the settings keep them
/// (`not_counting`: why the session does not count launches, from its ledger); `Err`
/// says why they cannot be noted.
fn begin(shared: &Shared, not_counting: Option<String>) -> Result<String, String> {
    if let Some(reason) = not_counting {
        return Err(format!(
            "they are noted by the launch callbacks, and launches are not counted ({reason})"
        ));
    }
    let c = &shared.config;
    cupmon_cupti::start_python_stacks(
        shared.cupti,
        c.python_stack_depth as usize,
        c.python_stack_timing,
    )
}

/// Starts noting stacks at the session's start when its settings want them and the
/// process runs a CPython the walker reads; returns what the meta says of it
/// (`"CPython 3.12.1"`, or why not).
pub(crate) fn start(shared: &Shared) -> String {
    if !shared.config.python_stacks {
        return "off (CUPMON_PYTHON_STACKS=0)".to_owned();
    }
    let not_counting = lock(&shared.ledger).not_counting();
    // The ledger has warned that launches are not counted; not a Python program (or
    // one older than 3.11) is nothing to warn about.
    let quiet = not_counting.is_some();
    match begin(shared, not_counting) {
        Ok(python) => {
            cupmon_log::info!("noting the Python stack of each launch ({python})");
            python
        }
        Err(why) => {
            if quiet || why.contains("Py_Version") {
                cupmon_log::info!("no Python stacks: {why}");
            } else {
                cupmon_log::warn!("the Python stacks of launches are not noted: {why}");
            }
            format!("off: {why}")
        }
    }
}

pub(crate) fn stop() {
    cupmon_cupti::stop_python_stacks();
}

/// Turns the noting of stacks on or off while the session runs (the program's
/// `cupmon.python_stacks(on)`, e.g. around a hot loop); returns whether it was on.
/// Launches made while it is off get no stack: the worker counts their records as
/// unattributed (`python_stack_records` in the meta), as any launch without a note.
/// On works even where `CUPMON_PYTHON_STACKS=0` started the session without them; it
/// fails, saying why, where the launch callbacks cannot note them (launches not
/// counted, no CPython the walker reads). The meta's `python_stacks_switched` counts
/// the session's switches (written with the meta's next rewrite, not at each switch:
/// switching costs no file write); the meta's lock, held throughout, orders switches.
pub(crate) fn switch(shared: &Shared, on: bool) -> Result<bool, StateError> {
    let not_counting = on.then(|| lock(&shared.ledger).not_counting()).flatten();
    let mut meta = lock(&shared.meta);
    let was = cupmon_cupti::python_stacks_noted();
    if was == on {
        return Ok(was);
    }
    let count = |key: &str| {
        meta.json()
            .get("python_stacks_switched")
            .and_then(|s| s.get(key))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0)
    };
    let (mut turned_off, mut turned_on) = (count("turned_off"), count("turned_on"));
    if on {
        let python =
            begin(shared, not_counting).map_err(|why| StateError::NoPythonStacks { why })?;
        // A session started without them (CUPMON_PYTHON_STACKS=0) has them now.
        let said_off = meta
            .json()
            .get("python_stacks")
            .and_then(serde_json::Value::as_str)
            .is_none_or(|s| s.starts_with("off"));
        if said_off {
            meta.set("python_stacks", python);
        }
        turned_on += 1;
    } else {
        cupmon_cupti::stop_python_stacks();
        turned_off += 1;
    }
    meta.set(
        "python_stacks_switched",
        serde_json::json!({"turned_off": turned_off, "turned_on": turned_on, "on": on}),
    );
    Ok(was)
}

/// The worker's half: pairs of this buffer.
#[derive(Debug, Default)]
pub(crate) struct StackJoin {
    pairs: Vec<(u32, u32)>,
    /// Graph nodes' stacks known (from the launch callbacks' side), and the last
    /// correlation id paired (a graph launch's kernels share one: paired once).
    nodes: rustc_hash::FxHashMap<u64, u32>,
    new_nodes: Vec<(u64, u32)>,
    last_corr: Option<u32>,
    /// Node stacks are taken at most once per buffer (a node never given one, from a
    /// graph captured before the session, must not cost a lock per kernel).
    nodes_looked: bool,
    nodes_started: bool,
    /// The process's stacks so far are written before the first pair (a second session
    /// of the process interned them for an earlier dump).
    started: bool,
    /// GPU work records whose launch had no stack noted (or an overwritten one).
    pub unattributed: u64,
    pub attributed: u64,
}

impl StackJoin {
    /// One record of a buffer.
    #[inline]
    pub fn see(&mut self, record: &Record) {
        let node = match record {
            Record::Kernel(k) => k.graph_node_id,
            Record::Memcpy(m) => m.graph_node_id,
            Record::Memset(m) => m.graph_node_id,
            _ => return,
        };
        // A graph node's work carries the node's stack (its replays read none).
        if node != 0 {
            let known = self.nodes.contains_key(&node)
                || (!self.nodes_looked && {
                    self.learn_nodes();
                    self.nodes.contains_key(&node)
                });
            if known {
                self.attributed += 1;
                return;
            }
        }
        let corr = record.correlation_id();
        match cupmon_cupti::launch_stack(corr) {
            Some(stack) => {
                if self.last_corr != Some(corr) {
                    self.pairs.push((corr, stack));
                    self.last_corr = Some(corr);
                }
                self.attributed += 1;
            }
            None => self.unattributed += 1,
        }
    }

    /// The graph nodes given stacks since the last look.
    fn learn_nodes(&mut self) {
        self.nodes_looked = true;
        let mut new = cupmon_cupti::take_new_node_stacks();
        if !self.nodes_started {
            // Nodes of graphs captured before this session (for an earlier dump).
            self.nodes_started = true;
            new = cupmon_cupti::all_node_stacks();
        }
        for &(node, stack) in &new {
            self.nodes.insert(node, stack);
        }
        self.new_nodes.extend(new);
    }

    /// The buffer's pairs and the stacks they need, written and flushed (after the
    /// buffer: its pairs go into its segment).
    pub fn write(&mut self, dump: &mut DumpWriter) -> Result<(), DumpError> {
        self.nodes_looked = false;
        if self.pairs.is_empty() && self.new_nodes.is_empty() {
            return Ok(());
        }
        let mut new = cupmon_pystack::take_new();
        if !self.started {
            self.started = true;
            new = cupmon_pystack::all();
        }
        let mut lines = Vec::with_capacity(new.frames.len() + new.stacks.len());
        for (id, f) in new.frames {
            lines.push(StackLine::Frame {
                frame: id,
                at: StackFrame {
                    file: f.file,
                    function: f.function,
                    line: f.line,
                    origin: f.origin.label().map(str::to_owned),
                },
            });
        }
        for s in new.stacks {
            lines.push(StackLine::Stack {
                stack: s.id,
                frames: s.frames,
                truncated: s.truncated,
                backward: s.backward,
            });
        }
        for (node, stack) in self.new_nodes.drain(..) {
            lines.push(StackLine::Node { node, stack });
        }
        let written = dump.add_python_stacks(&lines, &self.pairs);
        self.pairs.clear();
        written
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_settings_keep_stacks_as_deep_as_the_walker_can() {
        // cupmon-config does not depend on the walker: its bound is a copy.
        assert_eq!(
            cupmon_config::MAX_PYTHON_STACK_DEPTH as usize,
            cupmon_pystack::MAX_DEPTH
        );
        assert_eq!(
            cupmon_config::MonitorConfig::new("d").python_stack_depth as usize,
            cupmon_pystack::MAX_DEPTH
        );
    }
}
