//! `cupmon export`: one window as a standalone trace.

use anyhow::Result;
use cupmon_trace::MergeWindow;

use super::{check_output, export_trace, Input};
use crate::cli::ExportArgs;

pub fn run(args: &ExportArgs) -> Result<i32> {
    check_output(&args.output, &[Input::File(&args.window)])?;
    super::check_output_name(&args.output, super::Writes::Trace)?;
    let rank = args.rank.checked()?;
    let mut window = MergeWindow::read_with_limit(&args.window, args.max_event_size)?;
    if let Some((rank, world_size)) = rank {
        window.set_rank(rank, world_size);
    }
    export_trace(
        &window,
        &args.output,
        args.trace_name.clone(),
        args.exact,
        args.format,
    )?;
    Ok(0)
}
