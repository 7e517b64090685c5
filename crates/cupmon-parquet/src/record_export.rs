//! The rows of one process's records, on their way into the datasets: records in
//! (in buffer order), Parquet files out. [`crate::export_dump`] feeds it a dump's
//! records; benchmarks feed it generated ones.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use cupmon_records::dump::{LaunchStack, StackTable};
use cupmon_records::{KernelNameTable, KernelNames, Record};
use parquet::file::metadata::KeyValue;

use crate::correlations::Correlations;
use crate::datasets::{
    nccl_collective, ApiRows, DumpRow, DumpRows, KernelRows, MemcpyRows, MemsetRows, OffClockRows,
    StackFrameRow, StackRows,
};
use crate::encode::{Scratch, Strings, Sym};
use crate::error::ExportError;
use crate::export::Kinds;
use crate::name_cache::NameCache;
use crate::partition::{hour_of, HOUR_NS};
use crate::run_info::RunInfo;
use crate::sink::{DatasetTotals, Sink};

/// What a [`RecordExport`] wrote and saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordTotals {
    /// `(dataset, what was written)` in [`crate::DATASETS`] order.
    pub datasets: Vec<(&'static str, DatasetTotals)>,
    /// Earliest start and latest end among the rows written (Unix ns).
    pub first_ns: Option<i64>,
    pub last_ns: Option<i64>,
    /// First and last chunk of the records given.
    pub chunks: Option<(u64, u64)>,
    /// Records left out by the time slice.
    pub outside: u64,
    /// GPU ops (kernels, copies, memsets) left out because CUPTI did not time them
    /// (start 0), per dataset: rows at the Unix epoch would be lies.
    pub untimed: BTreeMap<&'static str, u64>,
    /// Kernel rows whose name pointer had no name.
    pub unresolved: u64,
}

impl RecordTotals {
    /// Rows written into `dataset`.
    pub fn rows(&self, dataset: &str) -> u64 {
        self.datasets
            .iter()
            .find(|(n, _)| *n == dataset)
            .map_or(0, |(_, t)| t.rows)
    }
}

/// One process's records becoming rows.
#[derive(Debug)]
pub struct RecordExport<'a> {
    out: &'a Path,
    file_name: String,
    run: RunInfo,
    extra: Vec<KeyValue>,
    kernels: Option<Sink<KernelRows>>,
    memcpy: Option<Sink<MemcpyRows>>,
    memset: Option<Sink<MemsetRows>>,
    api: Option<Sink<ApiRows>>,
    /// Made at the first record on its own clock: most dumps have none, and write no
    /// `off_clock` file.
    off_clock: Option<Sink<OffClockRows>>,
    kernel_names: KernelNames<'a>,
    annotations: &'a BTreeMap<u64, String>,
    /// Rows whose start is in `[from, to)`.
    from: i64,
    to: i64,
    strings: Strings,
    /// Name pointer -> (name, resolved, NCCL collective): a name is resolved,
    /// demangled and parsed once, not per row.
    names: NameCache,
    correlations: Correlations,
    scratch: Scratch,
    totals: RecordTotals,
    /// `[from, to)` (Unix ns) of the hour partition of the last row: rows stay in
    /// one hour for long, and two compares cost less than a division per row.
    hour: (i64, i64, i64),
    /// The dump's Python stacks (none: no `stack_id`s, no `stacks` rows).
    stacks: Option<PythonStacks>,
}

/// The Python stacks of the GPU ops being exported.
#[derive(Debug)]
struct PythonStacks {
    table: Arc<StackTable>,
    /// The session start (Unix ns): the `stacks` rows' time.
    time_ns: i64,
    /// Stack id → its `source_line`, interned once.
    lines: HashMap<u32, Option<Sym>>,
    /// Stacks the rows name: the `stacks` rows written.
    named: BTreeSet<u32>,
}

impl<'a> RecordExport<'a> {
    /// Files `out/<dataset>/day=.../hour=.../<stem>.<seq>.parquet`; `extra` goes
    /// into every file's key-value metadata.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        out: &'a Path,
        run: &RunInfo,
        seq: &str,
        kinds: Kinds,
        (from, to): (Option<i64>, Option<i64>),
        kernel_names: &'a KernelNameTable,
        annotations: &'a BTreeMap<u64, String>,
        extra: Vec<KeyValue>,
    ) -> Self {
        let file_name = format!("{}.{seq}.parquet", run.safe_file_stem());
        let values = run.constants();
        let sink = |on: bool| on.then(|| (out, file_name.clone(), values.clone(), extra.clone()));
        Self {
            kernels: sink(kinds.kernel).map(Sink::from_args),
            memcpy: sink(kinds.memcpy).map(Sink::from_args),
            memset: sink(kinds.memset).map(Sink::from_args),
            api: sink(kinds.api).map(Sink::from_args),
            off_clock: None,
            out,
            file_name,
            run: run.clone(),
            extra,
            kernel_names: KernelNames::new(kernel_names),
            annotations,
            from: from.unwrap_or(i64::MIN),
            to: to.unwrap_or(i64::MAX),
            strings: Strings::default(),
            names: NameCache::default(),
            correlations: Correlations::default(),
            scratch: crate::pool::take(),
            totals: RecordTotals::default(),
            hour: (0, 0, 0),
            stacks: None,
        }
    }

    /// The Python stacks that launched the records (`Dump::python_stacks`): kernels,
    /// copies and memsets get `stack_id` and `source_line`, and the stacks they name
    /// become `stacks` rows at `session_start_ns`. An empty table changes nothing.
    pub fn set_python_stacks(&mut self, table: Arc<StackTable>, session_start_ns: i64) {
        if !table.is_empty() {
            self.stacks = Some(PythonStacks {
                table,
                time_ns: session_start_ns,
                lines: HashMap::new(),
                named: BTreeSet::new(),
            });
        }
    }

    /// `stack_id` and `source_line` of a GPU op.
    #[inline]
    fn stack_of(&mut self, corr: u32, graph_node_id: u64) -> (Option<i64>, Option<Sym>) {
        let Some(st) = &mut self.stacks else {
            return (None, None);
        };
        match st.table.gpu_op(corr, graph_node_id) {
            None => (None, None),
            Some(LaunchStack::NoPython) => (Some(0), None),
            Some(LaunchStack::Stack(id)) => {
                let (table, strings) = (&st.table, &mut self.strings);
                let line = *st
                    .lines
                    .entry(id)
                    .or_insert_with(|| table.source_line(id).map(|l| strings.intern(&l)));
                st.named.insert(id);
                (Some(i64::from(id)), line)
            }
        }
    }

    /// The hour partition of a row starting at `t`.
    #[inline]
    fn hour_of(&mut self, t: i64) -> i64 {
        let (from, to, hour) = self.hour;
        if t >= from && t < to {
            return hour;
        }
        let hour = hour_of(t);
        let from = hour.saturating_mul(HOUR_NS);
        self.hour = (from, from.saturating_add(HOUR_NS), hour);
        hour
    }

    /// One record of chunk `chunk`.
    #[inline]
    pub fn record(&mut self, chunk: u64, record: &Record) -> Result<(), ExportError> {
        self.totals.chunks = Some(match self.totals.chunks {
            Some((a, b)) => (a.min(chunk), b.max(chunk)),
            None => (chunk, chunk),
        });
        let (start, end) = match record {
            Record::Kernel(r) => (r.start, r.end),
            Record::Memcpy(r) => (r.start, r.end),
            Record::Memset(r) => (r.start, r.end),
            Record::Api(r) => (r.start, r.end),
            Record::ExternalCorrelation(r) => {
                self.correlations
                    .add(r, self.annotations, &mut self.strings);
                return Ok(());
            }
            _ => return Ok(()),
        };
        if start == 0 && !matches!(record, Record::Api(_)) {
            let dataset = match record {
                Record::Kernel(_) => "kernels",
                Record::Memcpy(_) => "memcpy",
                _ => "memset",
            };
            *self.totals.untimed.entry(dataset).or_insert(0) += 1;
            return Ok(());
        }
        let t = start as i64;
        if t < self.from || t >= self.to {
            self.totals.outside += 1;
            return Ok(());
        }
        let hour = self.hour_of(t);
        let (stack_id, source_line) = match record {
            Record::Kernel(r) if self.kernels.is_some() => {
                self.stack_of(r.correlation_id, r.graph_node_id)
            }
            Record::Memcpy(r) if self.memcpy.is_some() => {
                self.stack_of(r.correlation_id, r.graph_node_id)
            }
            Record::Memset(r) if self.memset.is_some() => {
                self.stack_of(r.correlation_id, r.graph_node_id)
            }
            _ => (None, None),
        };
        let (strings, correlations, scratch) =
            (&mut self.strings, &self.correlations, &mut self.scratch);
        let pushed = match record {
            Record::Kernel(r) => self.kernels.as_mut().map(|s| {
                let kernel_names = &mut self.kernel_names;
                let (name, resolved, collective) = self.names.get(r.name_ptr, || {
                    let (name, resolved) = kernel_names.name(r.name_ptr);
                    let collective = nccl_collective(name);
                    (
                        strings.intern(name),
                        resolved,
                        collective.map(|c| strings.intern(c)),
                    )
                });
                self.totals.unresolved += u64::from(!resolved);
                let rows = s.rows(hour);
                rows.push(r, name, collective);
                rows.stack_id.push(stack_id);
                rows.source_line.push(source_line);
                s.pushed(strings, correlations, scratch)
            }),
            Record::Memcpy(r) => self.memcpy.as_mut().map(|s| {
                let rows = s.rows(hour);
                rows.push(r, strings);
                rows.stack_id.push(stack_id);
                rows.source_line.push(source_line);
                s.pushed(strings, correlations, scratch)
            }),
            Record::Memset(r) => self.memset.as_mut().map(|s| {
                let rows = s.rows(hour);
                rows.push(r, strings);
                rows.stack_id.push(stack_id);
                rows.source_line.push(source_line);
                s.pushed(strings, correlations, scratch)
            }),
            Record::Api(r) => self.api.as_mut().map(|s| {
                s.rows(hour).push(r, strings);
                s.pushed(strings, correlations, scratch)
            }),
            _ => None,
        };
        let Some(result) = pushed else { return Ok(()) };
        result?;
        if start != 0 {
            let first = self.totals.first_ns.get_or_insert(t);
            *first = (*first).min(t);
            if end >= start {
                let last = self.totals.last_ns.get_or_insert(end as i64);
                *last = (*last).max(end as i64);
            }
        }
        Ok(())
    }

    /// One record of chunk `chunk` on a clock the walk could not convert
    /// (`cupmon_records::clock::OFF_CLOCK_RULE`), its buffer completed at
    /// `buffer_completed_ns` (Unix): a row of `off_clock`, never of the datasets whose
    /// times are Unix ns. A slice keeps those whose buffer completed inside it.
    pub fn off_clock_record(
        &mut self,
        chunk: u64,
        buffer_completed_ns: u64,
        record: &Record,
    ) -> Result<(), ExportError> {
        if !matches!(
            record,
            Record::Kernel(_) | Record::Memcpy(_) | Record::Memset(_) | Record::Api(_)
        ) {
            return Ok(());
        }
        let t = buffer_completed_ns as i64;
        if t < self.from || t >= self.to {
            self.totals.outside += 1;
            return Ok(());
        }
        let hour = hour_of(t);
        let sink = self.off_clock.get_or_insert_with(|| {
            Sink::new(
                self.out,
                self.file_name.clone(),
                self.run.constants(),
                self.extra.clone(),
            )
        });
        let names = &mut self.kernel_names;
        let name = |ptr| names.name(ptr).0.to_owned();
        if sink
            .rows(hour)
            .push(t as u64, record, name, &mut self.strings)
        {
            self.totals.chunks = Some(match self.totals.chunks {
                Some((a, b)) => (a.min(chunk), b.max(chunk)),
                None => (chunk, chunk),
            });
            sink.pushed(&self.strings, &self.correlations, &mut self.scratch)?;
        }
        Ok(())
    }

    /// Take an external correlation record without counting its chunk as read.
    pub fn correlate(&mut self, r: &cupmon_records::ExternalCorrelationRecord) {
        self.correlations
            .add(r, self.annotations, &mut self.strings);
    }

    /// First and last chunk of the records so far.
    pub fn chunks(&self) -> Option<(u64, u64)> {
        self.totals.chunks
    }

    /// Kernel rows so far whose name pointer had no name.
    pub fn unresolved(&self) -> u64 {
        self.totals.unresolved
    }

    /// Write what is buffered, rename every file into place, and (when given) the
    /// `dumps` row, its rows and times filled in from this export, with `extra`
    /// in its file's metadata.
    pub fn finish(
        mut self,
        dump_row: Option<(DumpRow, Vec<KeyValue>)>,
    ) -> Result<RecordTotals, ExportError> {
        macro_rules! finish {
            ($field:ident) => {
                if let Some(sink) = self.$field.take() {
                    let totals =
                        sink.finish(&self.strings, &self.correlations, &mut self.scratch)?;
                    self.totals.datasets.push((sink_name(&self.$field), totals));
                }
            };
        }
        finish!(kernels);
        finish!(memcpy);
        finish!(memset);
        finish!(api);
        finish!(off_clock);
        self.finish_stacks()?;
        if let Some((mut row, extra)) = dump_row {
            let t = &self.totals;
            row.first_ns = t.first_ns;
            row.last_ns = t.last_ns;
            row.kernels = t.rows("kernels") as i64;
            row.memcpy = t.rows("memcpy") as i64;
            row.memset = t.rows("memset") as i64;
            row.api = t.rows("api") as i64;
            row.unresolved_kernel_names = t.unresolved as i64;
            let mut all = self.extra.clone();
            all.extend(extra);
            let values = self.run.constants();
            let mut sink: Sink<DumpRows> = Sink::new(self.out, self.file_name.clone(), values, all);
            sink.rows(hour_of(row.time_ns))
                .push(&row, &mut self.strings);
            sink.pushed(&self.strings, &self.correlations, &mut self.scratch)?;
            let totals = sink.finish(&self.strings, &self.correlations, &mut self.scratch)?;
            self.totals.datasets.push(("dumps", totals));
        }
        crate::pool::give(std::mem::take(&mut self.scratch));
        Ok(self.totals)
    }
}

impl RecordExport<'_> {
    /// The `stacks` rows: each frame of the stacks the rows named.
    fn finish_stacks(&mut self) -> Result<(), ExportError> {
        let Some(st) = self.stacks.take() else {
            return Ok(());
        };
        if st.named.is_empty() {
            return Ok(());
        }
        let mut sink: Sink<StackRows> = Sink::new(
            self.out,
            self.file_name.clone(),
            self.run.constants(),
            self.extra.clone(),
        );
        let hour = hour_of(st.time_ns);
        for &id in &st.named {
            let Some((frames, truncated)) = st.table.frames(id) else {
                continue;
            };
            let user = frames.iter().position(|f| f.is_user()).unwrap_or(0);
            for (i, f) in frames.iter().enumerate() {
                let row = StackFrameRow {
                    time_ns: st.time_ns,
                    stack_id: id,
                    frame: i,
                    file: &f.file,
                    function: &f.function,
                    line: f.line,
                    origin: f.origin.as_deref(),
                    user_frame: i == user,
                    truncated,
                };
                sink.rows(hour).push(&row, &mut self.strings);
                sink.pushed(&self.strings, &self.correlations, &mut self.scratch)?;
            }
        }
        let totals = sink.finish(&self.strings, &self.correlations, &mut self.scratch)?;
        self.totals
            .datasets
            .push((<StackRows as crate::table::Rows>::SPEC.name, totals));
        Ok(())
    }
}

fn sink_name<R: crate::table::Rows>(_: &Option<Sink<R>>) -> &'static str {
    R::SPEC.name
}
