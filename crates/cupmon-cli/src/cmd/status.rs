//! `cupmon status TARGET`: the monitored processes of a run, a dump or a pid: the
//! first thing to run on a node.

use std::io::Write;

use anyhow::Result;
use cupmon_control::{find_processes, Client, ProcessStatus, Request, Response};

use crate::cli::StatusArgs;
use crate::exit::BadInput;

pub fn run(args: &StatusArgs) -> Result<i32> {
    let found = find_processes(&args.target).map_err(BadInput)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:>8} {:>5} {:>10} {:>12} {:>10} {:>9}  {:<22} command",
        "pid", "rank", "running", "kernels/s", "dump", "dropped", "window"
    )?;
    let mut gone = 0;
    for f in found {
        let status = if f.alive {
            match Client::new(&f.control.socket, args.timeout).call(&Request::Status) {
                Ok(Response::Status(s)) => Ok(*s),
                Ok(other) => Err(format!("{other:?}")),
                Err(e) => Err(e.to_string()),
            }
        } else {
            Err("exited".to_owned())
        };
        match status {
            Ok(s) => writeln!(out, "{}", line(&s))?,
            Err(why) => {
                gone += 1;
                if args.all {
                    writeln!(out, "{:>8} {why}: {}", f.control.pid, f.dump_dir.display())?;
                }
            }
        }
    }
    if gone > 0 && !args.all {
        writeln!(out, "({gone} exited or not answering; --all lists them)")?;
    }
    Ok(0)
}

fn line(s: &ProcessStatus) -> String {
    let rank = s.rank.map_or_else(|| "-".to_owned(), |r| r.to_string());
    let dump = match s.budget_bytes {
        Some(b) => format!("{}/{}", mb(s.dump_bytes), mb(b)),
        None => mb(s.dump_bytes),
    };
    let window = if s.window.open {
        format!("open ({})", s.window.owner.as_deref().unwrap_or("?"))
    } else {
        format!("closed, {} taken", s.windows_written)
    };
    let command = s.command.join(" ");
    format!(
        "{:>8} {:>5} {:>9.0}s {:>12.0} {:>10} {:>9}  {:<22} {}",
        s.pid,
        rank,
        s.uptime_s,
        s.kernels_per_s,
        dump,
        s.dropped_records,
        window,
        if command.len() > 60 {
            format!("{}...", &command[..command.floor_char_boundary(57)])
        } else {
            command
        }
    )
}

fn mb(bytes: u64) -> String {
    format!("{:.1}MB", bytes as f64 / 1e6)
}
