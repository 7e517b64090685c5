//! A `TrackEvent`'s common part: type, interned name and category, args,
//! flows (everything but its track, which a slice gets when it is placed).

use crate::args::{write_args, Arg, WriteArgs};
use crate::error::PftraceError;
use crate::fields::track_event as te;
use crate::intern::Tables;
use crate::wire;

/// A TrackEvent's type, name, category and args (not its track).
pub(crate) fn encode_event(
    buf: &mut Vec<u8>,
    tables: &mut Tables,
    ty: u64,
    name: &str,
    category: &str,
    args: &[Arg<'_>],
    more_args: Option<&dyn WriteArgs>,
) {
    wire::uint(buf, te::TYPE, ty);
    match tables.names.lookup(name, &mut tables.pending).get() {
        Some(iid) => wire::uint(buf, te::NAME_IID, iid),
        None => wire::bytes(buf, te::NAME, name.as_bytes()),
    }
    if !category.is_empty() {
        match tables
            .categories
            .lookup(category, &mut tables.pending)
            .get()
        {
            Some(iid) => wire::uint(buf, te::CATEGORY_IIDS, iid),
            None => wire::bytes(buf, te::CATEGORIES, category.as_bytes()),
        }
    }
    write_args(buf, tables, args, more_args);
}

pub(crate) fn write_flows(buf: &mut Vec<u8>, flow_ids: &[u64], terminating: &[u64]) {
    for &id in flow_ids {
        wire::fixed64(buf, te::FLOW_IDS, id);
    }
    for &id in terminating {
        wire::fixed64(buf, te::TERMINATING_FLOW_IDS, id);
    }
}

pub(crate) fn check_flows(
    name: &str,
    flow_ids: &[u64],
    terminating: &[u64],
) -> Result<(), PftraceError> {
    if flow_ids.iter().chain(terminating).any(|&id| id == 0) {
        return Err(PftraceError::ZeroFlowId {
            name: name.to_owned(),
        });
    }
    Ok(())
}
