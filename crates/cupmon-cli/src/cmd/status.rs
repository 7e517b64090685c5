//! `cupmon status TARGET`: the monitored processes of a run, a dump or a pid: the
//! first thing to run on a node.

mod stragglers;

use std::io::Write;
use std::time::Duration;

use anyhow::Result;
use cupmon_control::{
    find_processes, Client, ClientError, Found, ProcessStatus, Request, Response,
};

use crate::cli::StatusArgs;
use crate::exit::BadInput;

pub fn run(args: &StatusArgs) -> Result<i32> {
    let found = find_processes(&args.target).map_err(BadInput)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:>8} {:>5} {:>10} {:>12} {:>17} {:>9} {:>11}  {:<22} command",
        "pid", "rank", "running", "kernels/s", "dump/budget", "dropped", "unrecorded", "window"
    )?;
    // All at once, so that `--timeout` bounds the whole command, however many
    // processes are slow to answer (or drip their answers).
    let answers: Vec<Asked> = std::thread::scope(|scope| {
        let asks: Vec<_> = found
            .iter()
            .map(|f| scope.spawn(|| ask(f, args.timeout)))
            .collect();
        asks.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Asked::Gone("no answer".to_owned()))
            })
            .collect()
    });
    let mut gone = 0;
    let mut warnings = Vec::new();
    let mut answered = Vec::new();
    for (f, asked) in found.iter().zip(answers) {
        match asked {
            Asked::Status(s) => {
                writeln!(out, "{}", line(&s))?;
                answered.push(f.dump_dir.clone());
                warnings.extend(account_warning(&s));
            }
            Asked::Refused(why) => {
                gone += 1;
                eprintln!(
                    "cupmon: warning: pid {} ({}): {why}",
                    f.control.pid,
                    f.dump_dir.display()
                );
            }
            Asked::Gone(why) => {
                gone += 1;
                if args.all {
                    writeln!(out, "{:>8} {why}: {}", f.control.pid, f.dump_dir.display())?;
                }
            }
        }
    }
    if gone > 0 && !args.all {
        writeln!(
            out,
            "({gone} exited, not answering or refused; --all lists them)"
        )?;
    }
    for warning in warnings {
        writeln!(out, "{warning}")?;
    }
    if let Some(recent) = stragglers::last_minute(&answered) {
        stragglers::print(&mut out, &recent)?;
    }
    Ok(0)
}

/// What a found process answered.
pub(super) enum Asked {
    Status(Box<ProcessStatus>),
    /// Exited, or no answer in time: listed with `--all`.
    Gone(String),
    /// An answer that is not to be trusted (another process, too large, another
    /// dump directory): always said, on stderr.
    Refused(String),
}

/// The status of a found process, from its checked peer.
pub(super) fn ask(f: &Found, timeout: Duration) -> Asked {
    if !f.alive {
        return Asked::Gone("exited".to_owned());
    }
    match Client::of(f, timeout).call(&Request::Status) {
        Ok(Response::Status(s)) => match f.check_status(&s) {
            Ok(()) => Asked::Status(s),
            Err(e) => Asked::Refused(e.to_string()),
        },
        Ok(other) => Asked::Gone(format!("{other:?}")),
        Err(e @ (ClientError::WrongPeer { .. } | ClientError::TooLarge { .. })) => {
            Asked::Refused(e.to_string())
        }
        Err(e) => Asked::Gone(e.to_string()),
    }
}

/// The loud line for a process whose kernels are not all accounted for, or whose
/// launches are not counted (`-` in the table).
fn account_warning(s: &ProcessStatus) -> Option<String> {
    match (s.kernels_unaccounted, &s.launches_not_counted) {
        (Some(n), _) if n > 0 && s.delivery_gaps > 0 => Some(format!(
            "WARNING: pid {}: CUPTI stopped delivering while kernels were launched ({} gap(s), \
             {} recoveries so far): {n} kernels launched are neither recorded nor counted as \
             dropped: {}",
            s.pid, s.delivery_gaps, s.recoveries, s.dump_dir
        )),
        (None, Some(why)) => Some(format!(
            "pid {}: kernel launches not counted ({why}): unaccounted kernels cannot be seen",
            s.pid
        )),
        (None, None) => Some(format!(
            "pid {}: kernel launches not counted (a cupmon without the launch counter)",
            s.pid
        )),
        _ => None,
    }
}

fn line(s: &ProcessStatus) -> String {
    let rank = s.rank.map_or_else(|| "-".to_owned(), |r| r.to_string());
    let dump = match s.budget_bytes {
        Some(b) => format!("{}/{}", mb(s.dump_bytes), mb(b)),
        None => mb(s.dump_bytes),
    };
    // Launched and neither recorded nor dropped: in flight, or (after a gap in CUPTI's
    // delivery, marked `!`) lost.
    let unaccounted = match s.kernels_unaccounted {
        Some(n) if s.delivery_gaps > 0 => format!("{n} !"),
        Some(n) => n.to_string(),
        None => "-".to_owned(),
    };
    let window = if s.window.open {
        format!("open ({})", s.window.owner.as_deref().unwrap_or("?"))
    } else {
        format!("closed, {} taken", s.windows_written)
    };
    format!(
        "{:>8} {:>5} {:>9.0}s {:>12.0} {:>17} {:>9} {:>11}  {:<22} {}",
        s.pid,
        rank,
        s.uptime_s,
        s.kernels_per_s,
        dump,
        s.dropped_records,
        unaccounted,
        window,
        shown_command(&s.command)
    )
}

/// Widest command column of the table, in bytes.
const COMMAND_WIDTH: usize = 60;

/// The command as the table shows it: whole when it fits; else each path argument
/// shortened to `.../` and its last component (`--out=/a/b` to `--out=.../b`), so the
/// program's name (and a script's) stays visible however deep the checkout; then
/// cut at the end.
fn shown_command(argv: &[String]) -> String {
    let whole = argv.join(" ");
    if whole.len() <= COMMAND_WIDTH {
        return whole;
    }
    let short = argv
        .iter()
        .map(|a| short_path(a))
        .collect::<Vec<_>>()
        .join(" ");
    if short.len() <= COMMAND_WIDTH {
        return short;
    }
    format!(
        "{}...",
        &short[..short.floor_char_boundary(COMMAND_WIDTH - 3)]
    )
}

/// `/a/b/prog` as `.../prog`; a word with an `=` before its path keeps what precedes
/// it. Words without a directory, or ending in `/`, stay as they are.
fn short_path(word: &str) -> String {
    let (prefix, path) = match word.split_once('=') {
        Some((p, rest)) if !p.contains('/') => (&word[..=p.len()], rest),
        _ => ("", word),
    };
    match path.rsplit_once('/') {
        Some((dir, base)) if !dir.is_empty() && !base.is_empty() => {
            format!("{prefix}.../{base}")
        }
        _ => word.to_owned(),
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.1}MB", bytes as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_command_keeps_its_program_name() {
        let argv = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let short = argv(&["python3", "train.py", "--steps", "10"]);
        assert_eq!(shown_command(&short), "python3 train.py --steps 10");
        let deep = "/work/wt/some-very-long-worktree-name/target/debug/deps/fake_cuda_app";
        let shown = shown_command(&argv(&[deep, "launch", "5", "sleep", "1200"]));
        assert_eq!(shown, ".../fake_cuda_app launch 5 sleep 1200");
        let script = "/home/someone/projects/a-long-project-name/scripts/train_big.py";
        let shown = shown_command(&argv(&[
            "/usr/bin/python3",
            script,
            "--out=/scratch/someone/runs/2026-12-03/checkpoints",
            "--steps",
            "1",
        ]));
        assert_eq!(
            shown,
            ".../python3 .../train_big.py --out=.../checkpoints --steps 1"
        );
        // Still too wide: cut at the end, the program's name first.
        let many = argv(&[deep, &"x".repeat(80)]);
        let shown = shown_command(&many);
        assert!(shown.starts_with(".../fake_cuda_app xxx"), "{shown}");
        assert_eq!(shown.len(), COMMAND_WIDTH);
        assert!(shown.ends_with("..."), "{shown}");
        // Words that are no paths stay whole.
        assert_eq!(short_path("a=b"), "a=b");
        assert_eq!(short_path("dir/"), "dir/");
        assert_eq!(short_path("/prog"), "/prog");
    }

    #[test]
    fn unaccounted_kernels_are_a_column_and_a_warning() {
        let mut s = ProcessStatus {
            pid: 42,
            dump_bytes: 150_000_000,
            budget_bytes: Some(256 << 20),
            kernels_launched: Some(1000),
            kernels_unaccounted: Some(0),
            ..ProcessStatus::default()
        };
        let row = line(&s);
        assert!(row.contains("150.0MB/268.4MB"), "{row}");
        assert_eq!(account_warning(&s), None);
        s.kernels_unaccounted = Some(70);
        assert!(line(&s).contains(" 70 "), "in flight: {}", line(&s));
        assert_eq!(account_warning(&s), None, "no gap yet: in flight");
        s.delivery_gaps = 1;
        assert!(line(&s).contains("70 !"));
        let warning = account_warning(&s).unwrap();
        assert!(
            warning.starts_with("WARNING: pid 42: CUPTI stopped delivering"),
            "{warning}"
        );
        assert!(
            warning.contains("70 kernels launched are neither"),
            "{warning}"
        );
        s.kernels_unaccounted = None;
        s.launches_not_counted = Some("another subscriber came first".into());
        assert!(line(&s).contains(" - "));
        assert!(account_warning(&s)
            .unwrap()
            .contains("another subscriber came first"));
    }
}
