//! A [`MergeWindow`] straight from cupmon's own [`TraceWindow`], without a
//! JSON round trip; the same values the JSON reader would produce.

use cupmon_records::ApiDomain;

use super::window_input::{
    ApiEvent, ExternalCorrelation, GpuDetail, GpuEvent, GpuKind, KernelLaunch, Lazy, MergeEvent,
    MergeWindow, OverheadEvent,
};
use crate::json::value::Value;
use crate::{GpuPlace, TraceWindow, WindowEvent};

fn gpu(
    kind: GpuKind,
    place: &GpuPlace,
    (start_ns, end_ns): (u64, u64),
    name: &str,
    annotation: &Option<String>,
    detail: GpuDetail,
    launch: Option<Box<KernelLaunch>>,
) -> MergeEvent {
    MergeEvent::Gpu(Box::new(GpuEvent {
        kind,
        device_id: place.device_id.into(),
        stream_id: place.stream_id.into(),
        context_id: place.context_id.into(),
        correlation_id: place.correlation_id.into(),
        start_ns: start_ns.into(),
        end_ns: end_ns.into(),
        graph_id: place.graph_id.into(),
        graph_node_id: place.graph_node_id.into(),
        name: name.to_owned(),
        annotation: annotation.clone().map(Value::Str),
        detail,
        launch,
    }))
}

fn launch_of(k: &crate::KernelEvent) -> Box<KernelLaunch> {
    Box::new(KernelLaunch {
        config: k.into(),
        queued_ns: k.queued_ns.into(),
    })
}

fn api(domain: ApiDomain, e: &crate::ApiEvent) -> MergeEvent {
    let cbid = i128::from(e.cbid);
    let registered = crate::is_registered(domain, &domain.name(cbid));
    MergeEvent::Api(ApiEvent {
        domain,
        cbid,
        process_id: e.process_id.into(),
        thread_id: e.thread_id.into(),
        correlation_id: e.correlation_id.into(),
        registered,
        start_ns: e.start_ns.into(),
        end_ns: e.end_ns.into(),
        end_ns_get: e.end_ns.into(),
    })
}

impl From<&WindowEvent> for MergeEvent {
    fn from(event: &WindowEvent) -> Self {
        match event {
            WindowEvent::Kernel(k) => gpu(
                GpuKind::Kernel,
                &k.gpu,
                (k.start_ns, k.end_ns),
                &k.name,
                &k.annotation,
                GpuDetail::Kernel,
                Some(launch_of(k)),
            ),
            WindowEvent::Memcpy(m) => gpu(
                GpuKind::Memcpy,
                &m.gpu,
                (m.start_ns, m.end_ns),
                &m.name,
                &m.annotation,
                GpuDetail::Memcpy {
                    bytes: m.bytes.into(),
                    copy_kind: m.copy_kind.into(),
                    src_kind: m.src_kind.into(),
                    dst_kind: m.dst_kind.into(),
                    flags: m.flags.into(),
                },
                None,
            ),
            WindowEvent::Memset(m) => gpu(
                GpuKind::Memset,
                &m.gpu,
                (m.start_ns, m.end_ns),
                &m.name,
                &m.annotation,
                GpuDetail::Memset {
                    bytes: m.bytes.into(),
                    value: m.value.into(),
                    memory_kind: m.memory_kind.into(),
                    flags: m.flags.into(),
                },
                None,
            ),
            WindowEvent::Runtime(e) => api(ApiDomain::Runtime, e),
            WindowEvent::Driver(e) => api(ApiDomain::Driver, e),
            WindowEvent::ExternalCorrelation(x) => {
                MergeEvent::ExternalCorrelation(ExternalCorrelation {
                    external_kind: Lazy::Value(x.external_kind.into()),
                    external_id: x.external_id.into(),
                    correlation_id: x.correlation_id.into(),
                    end_ns_get: 0,
                })
            }
            WindowEvent::Overhead(o) => MergeEvent::Overhead(Box::new(OverheadEvent {
                is_buffer_request: o.name == "Activity Buffer Request",
                start_ns_get: Lazy::Value(o.start_ns.into()),
                name: Lazy::Value(o.name.clone()),
                start_ns: Lazy::Value(o.start_ns.into()),
                end_ns: Lazy::Value(o.end_ns.into()),
            })),
            WindowEvent::CudaEvent(_) => MergeEvent::Other { end_ns: 0 },
            WindowEvent::Sync(s) => MergeEvent::Other {
                end_ns: s.end_ns.into(),
            },
            // Kinds PyTorch's merge does not know (memory, memory pools, any kind
            // added): it reads their `end_ns`, absent; a complete trace shows them
            // (`kinds_out.rs`).
            _ => MergeEvent::Extra(Box::new(event.clone())),
        }
    }
}

impl From<&TraceWindow> for MergeWindow {
    fn from(w: &TraceWindow) -> Self {
        MergeWindow {
            events: w.events.iter().map(MergeEvent::from).collect(),
            user_annotations: w
                .user_annotations
                .iter()
                .map(|(&id, name)| (i128::from(id), Some(name.clone())))
                .collect(),
            thread_resource_map: w
                .thread_resource_map
                .iter()
                .map(|(&pid, m)| {
                    (
                        i128::from(pid),
                        m.iter()
                            .map(|(&k, &v)| (i128::from(k), i128::from(v)))
                            .collect(),
                    )
                })
                .collect(),
            cupmon: w.cupmon.clone(),
            device_properties: w.device_properties.as_ref().map(|v| v.to_string()),
            distributed_info: w.distributed_info.clone(),
            cpu_annotations: w.cpu_annotations.clone(),
            off_clock: super::off_clock::from_window(w.off_clock.as_ref()),
            python_stacks: None,
        }
    }
}
