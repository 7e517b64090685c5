//! Where a GPU record ran: the leading fields of kernel, memcpy and memset events.

use serde::{Deserialize, Serialize};

/// Device, context, stream, correlation and graph of a GPU operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuPlace {
    pub device_id: u32,
    pub context_id: u32,
    pub stream_id: u32,
    pub correlation_id: u32,
    pub graph_node_id: u64,
    pub graph_id: u32,
}

/// A [`GpuPlace`] from a record's fields of the same names.
macro_rules! gpu_place {
    ($r:expr) => {
        $crate::kinds::GpuPlace {
            device_id: $r.device_id,
            context_id: $r.context_id,
            stream_id: $r.stream_id,
            correlation_id: $r.correlation_id,
            graph_node_id: $r.graph_node_id,
            graph_id: $r.graph_id,
        }
    };
}
pub(crate) use gpu_place;
