//! Counting kernel launches independently of the activity records, through CUPTI's
//! callback API: the only way to see kernels CUPTI launched but never recorded nor
//! counted as dropped (on the H200, at about 1 M kernels/s sustained, 36 % of them).
//!
//! - `ids`: the launch callbacks (runtime and driver domains; graph launches count
//!   the kernel nodes of their executable graph) and CUPTI's callback data layouts.
//! - `counter`: per-thread sharded counters, bumped at the exit of the outermost
//!   launch call that succeeded.
//! - `inflight`: per thread, its last launches and the synchronisation it is blocked
//!   in (for hang records).
//! - `graphs`: kernels per executable graph, counted when it is instantiated.
//! - `subscriber`: cupmon's one subscription and its callback.
//! - `stacks`: the Python stack of each launch, by correlation id.
//! - `autograd`: backward threads' launches given their forward op's stack, by torch's
//!   sequence numbers in NVTX range names.
//! - `clients`: other subscribers (Kineto) served through that subscription.

pub mod autograd;
mod clients;
mod counter;
mod graphs;
pub mod ids;
pub mod inflight;
mod stack_timing;
mod stacks;
mod subscriber;

pub use counter::{launch_counts, LaunchCounts};
pub use stack_timing::{python_stack_timing, StackTiming};
pub use stacks::{
    all_node_stacks, launch_stack, python_stacks_noted, start_python_stacks, stop_python_stacks,
    take_new_node_stacks,
};
pub use subscriber::{
    client_callback_state, client_enable_all_domains, client_enable_callback, client_enable_domain,
    is_client_handle, known_graphs, launch_counting, leave_callback_slot, unsubscribe_client,
    Counting,
};
