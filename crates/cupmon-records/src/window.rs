//! From decoded records to the seed's trace-window events (`cupmon_trace::WindowEvent`):
//! the seed monitor's kind and field names, `cbid_N` API names, `Memcpy`/`Memset`,
//! overhead kind names, `sync_{type}`, overhead `object_id` 0; kernel names resolved
//! through the dump's name table and demangled as `c++filt` does.

use std::collections::HashMap;

use cupmon_trace::{
    overhead_kind_name, ApiDomain, ApiEvent, CudaEventEvent, ExternalCorrelationEvent, GpuPlace,
    KernelEvent, MemcpyEvent, MemsetEvent, OverheadEvent, SyncEvent, WindowEvent,
};

use crate::demangle::demangle;
use crate::dump::KernelNameTable;
use crate::record::{KernelRecord, Record};

/// Where a kernel, memcpy or memset record ran: the fields their structs share.
macro_rules! gpu_place {
    ($r:expr) => {
        GpuPlace {
            device_id: $r.device_id,
            context_id: $r.context_id,
            stream_id: $r.stream_id,
            correlation_id: $r.correlation_id,
            graph_node_id: $r.graph_node_id,
            graph_id: $r.graph_id,
        }
    };
}

/// Turns records into window events, demangling each distinct kernel name once.
#[derive(Debug)]
pub struct EventBuilder<'a> {
    names: &'a KernelNameTable,
    /// name pointer -> (demangled or placeholder name, resolved)
    cache: HashMap<u64, (String, bool)>,
    unresolved_kernels: u64,
}

impl<'a> EventBuilder<'a> {
    /// `names`: the dump's `kernel_names.tsv` (empty when the dump has none).
    pub fn new(names: &'a KernelNameTable) -> Self {
        Self {
            names,
            cache: HashMap::new(),
            unresolved_kernels: 0,
        }
    }

    /// Kernel events so far whose name pointer had no entry in the name table.
    pub fn unresolved_kernels(&self) -> u64 {
        self.unresolved_kernels
    }

    /// The kernel name for a name pointer: demangled, or `kernel@0x<ptr>` when the table
    /// lacks it; the flag says whether it was resolved.
    pub fn kernel_name(&mut self, ptr: u64) -> (&str, bool) {
        let names = self.names;
        let (name, resolved) = self
            .cache
            .entry(ptr)
            .or_insert_with(|| match names.get(ptr) {
                Some(mangled) => (demangle(mangled).into_owned(), true),
                None => (format!("kernel@0x{ptr:x}"), false),
            });
        (name.as_str(), *resolved)
    }

    /// The window event for one record.
    pub fn event(&mut self, record: &Record) -> WindowEvent {
        match record {
            Record::Kernel(r) => WindowEvent::Kernel(self.kernel(r)),
            Record::Memcpy(r) => WindowEvent::Memcpy(MemcpyEvent {
                gpu: gpu_place!(r),
                runtime_correlation_id: r.runtime_correlation_id,
                start_ns: r.start,
                end_ns: r.end,
                bytes: r.bytes,
                copy_kind: r.copy_kind.into(),
                src_kind: r.src_kind.into(),
                dst_kind: r.dst_kind.into(),
                flags: r.flags.into(),
                annotation: None,
                name: "Memcpy".to_owned(),
                channel_id: r.channel_id,
                channel_type: r.channel_type,
            }),
            Record::Memset(r) => WindowEvent::Memset(MemsetEvent {
                gpu: gpu_place!(r),
                start_ns: r.start,
                end_ns: r.end,
                bytes: r.bytes,
                value: r.value,
                memory_kind: r.memory_kind.into(),
                flags: r.flags.into(),
                annotation: None,
                name: "Memset".to_owned(),
                channel_id: r.channel_id,
                channel_type: r.channel_type,
            }),
            Record::Api(r) => {
                let event = ApiEvent {
                    cbid: r.cbid,
                    start_ns: r.start,
                    end_ns: r.end,
                    process_id: r.process_id,
                    thread_id: r.thread_id,
                    correlation_id: r.correlation_id,
                    return_value: r.return_value,
                    name: format!("cbid_{}", r.cbid),
                    api_name: r.domain.known_name(r.cbid),
                };
                match r.domain {
                    ApiDomain::Runtime => WindowEvent::Runtime(event),
                    ApiDomain::Driver => WindowEvent::Driver(event),
                }
            }
            Record::ExternalCorrelation(r) => {
                WindowEvent::ExternalCorrelation(ExternalCorrelationEvent {
                    external_kind: r.external_kind,
                    external_id: r.external_id,
                    correlation_id: r.correlation_id,
                    name: "external_correlation".to_owned(),
                })
            }
            Record::Overhead(r) => WindowEvent::Overhead(OverheadEvent {
                overhead_kind: r.overhead_kind,
                object_kind: r.object_kind,
                // The seed's monitor writes 0 here; the raw ids stay in the record.
                object_id: 0,
                start_ns: r.start,
                end_ns: r.end,
                correlation_id: r.correlation_id,
                name: overhead_kind_name(r.overhead_kind),
            }),
            Record::CudaEvent(r) => WindowEvent::CudaEvent(CudaEventEvent {
                device_id: r.device_id,
                context_id: r.context_id,
                stream_id: r.stream_id,
                event_id: r.event_id,
                correlation_id: r.correlation_id,
                device_timestamp_ns: r.device_timestamp,
                cuda_event_sync_id: r.cuda_event_sync_id,
                name: "cuda_event".to_owned(),
            }),
            Record::Synchronization(r) => WindowEvent::Sync(SyncEvent {
                sync_type: r.sync_type,
                start_ns: r.start,
                end_ns: r.end,
                correlation_id: r.correlation_id,
                context_id: r.context_id,
                stream_id: r.stream_id,
                event_id: r.cuda_event_id,
                cuda_event_sync_id: r.cuda_event_sync_id,
                return_value: r.return_value,
                name: format!("sync_{}", r.sync_type),
            }),
        }
    }

    fn kernel(&mut self, r: &KernelRecord) -> KernelEvent {
        let (name, resolved) = self.kernel_name(r.name_ptr);
        let name = name.to_owned();
        if !resolved {
            self.unresolved_kernels += 1;
        }
        KernelEvent {
            gpu: gpu_place!(r),
            start_ns: r.start,
            end_ns: r.end,
            annotation: None,
            name,
            grid: r.grid,
            block: r.block,
            cluster: r.cluster,
            registers_per_thread: r.registers_per_thread,
            static_shared_memory: r.static_shared_memory,
            dynamic_shared_memory: r.dynamic_shared_memory,
            queued_ns: r.queued,
            submitted_ns: r.submitted,
            completed_ns: r.completed,
            launch_type: r.launch_type,
            channel_id: r.channel_id,
            channel_type: r.channel_type,
            grid_id: r.grid_id,
            name_resolved: resolved,
        }
    }
}
