//! NVTX marks (`nvtxMark*`, `nvtxDomainMarkEx`): instants on the thread that made
//! them, kept by the monitor while a window is prepared or open. Outside windows a
//! mark costs the thread's state and one atomic load: nothing is read or kept.

use cupmon_monitor::RangeAttributes;

use super::ranges::{with_thread, Message};

/// The name of a mark whose attributes carry no message.
const UNNAMED: &str = "(unnamed NVTX mark)";

/// A mark named `message` with `attributes`, on this thread, now.
pub(crate) fn mark(attributes: RangeAttributes, message: Message<'_>) {
    with_thread(|t, monitor| {
        let Some(m) = monitor.filter(|m| m.wants_ranges()) else {
            return;
        };
        let at = t.start_here(attributes, true);
        let (name, _) = match message {
            Message::None => t.intern(Message::Ascii(UNNAMED.as_bytes())),
            message => t.intern(message),
        };
        m.mark(&name, at);
    })
}
