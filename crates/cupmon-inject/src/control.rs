//! The control channel's answers (`cupmon window`, `cupmon status`), served by
//! cupmon-control on a thread of its own; each request works on the session as the
//! C ABI does.

use std::sync::atomic::Ordering;

use cupmon_control::{Handler, ProcessStatus, Request, Response, WindowStatus};

use crate::session::{self, Session};

/// The handler of this process's channel.
pub(crate) struct Channel;

impl Handler for Channel {
    fn handle(&mut self, request: Request) -> Response {
        let Some(s) = session::current() else {
            return Response::Error {
                message: "cupmon is not monitoring this process any more".into(),
            };
        };
        match request {
            Request::Status => Response::Status(Box::new(status(&s))),
            Request::StartWindow { owner, steps } => match s.open_window(&owner, steps) {
                Ok(_) => Response::WindowStarted {
                    start_unix_ns: session::unix_ns(),
                },
                Err(e) => Response::Error {
                    message: match s.window_owner() {
                        Some(o) => format!(
                            "{e} (opened by {} {:.1} s ago)",
                            o.who,
                            session::unix_ns().saturating_sub(o.since_unix_ns) as f64 / 1e9
                        ),
                        None => e.to_string(),
                    },
                },
            },
            Request::HangDump { owner } => {
                match s
                    .monitor
                    .write_hang_record(cupmon_monitor::HangTrigger::OnDemand, &owner)
                {
                    Ok(path) => Response::HangRecorded {
                        path: path.display().to_string(),
                    },
                    Err(e) => Response::Error {
                        message: format!("the hang record was not written: {e}"),
                    },
                }
            }
            Request::EndWindow => match session::end_window_to_files() {
                Ok(Some(_)) => match s
                    .last_window
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone()
                {
                    Some(last) => Response::WindowWritten(last),
                    None => Response::Error {
                        message: "the window was closed but its files are unknown".into(),
                    },
                },
                Ok(None) => Response::Error {
                    message: "no trace window is open".into(),
                },
                Err(e) => Response::Error {
                    message: e.to_string(),
                },
            },
        }
    }
}

fn status(s: &Session) -> ProcessStatus {
    let m = &s.monitor;
    let stats = m.stats();
    let config = m.config();
    let owner = s.window_owner();
    ProcessStatus {
        pid: std::process::id(),
        rank: std::env::var("RANK").ok().and_then(|r| r.parse().ok()),
        command: std::fs::read("/proc/self/cmdline")
            .map(|b| short_command(&b))
            .unwrap_or_default(),
        dump_dir: config.dump_dir.display().to_string(),
        started_unix_ns: session::unix_ns().saturating_sub(m.uptime().as_nanos() as u64),
        uptime_s: m.uptime().as_secs_f64(),
        kernels_per_s: m.kernel_rate(),
        records: stats.records,
        dropped_records: stats.dropped_records,
        dump_bytes: dir_bytes(&config.dump_dir),
        budget_bytes: m.budget_bytes(),
        kernels_launched: stats.kernels_launched,
        launches_not_counted: stats.launches_not_counted.clone(),
        kernels_unaccounted: stats.kernels_unaccounted,
        recoveries: stats.recoveries,
        delivery_gaps: stats.delivery_gaps,
        window: WindowStatus {
            open: m.window_open(),
            owner: owner.as_ref().map(|o| o.who.clone()),
            since_unix_ns: owner.as_ref().map(|o| o.since_unix_ns),
            steps_left: owner.and_then(|o| o.steps_left),
        },
        windows_written: s.windows_written.load(Ordering::Relaxed),
        last_window: s
            .last_window
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone(),
    }
}

/// The most bytes of the command line a status answer carries: a command of
/// megabytes (ARG_MAX allows them) would pass the clients' answer cap
/// (`cupmon_control::MAX_ANSWER`) and leave `cupmon status` with no answer at all.
const MAX_COMMAND: usize = 16 << 10;

/// The arguments of a `/proc/self/cmdline`, up to [`MAX_COMMAND`] bytes; a last
/// `...(N more bytes)` says what was left out.
fn short_command(cmdline: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut kept = 0;
    for (i, arg) in cmdline
        .split(|&c| c == 0)
        .filter(|a| !a.is_empty())
        .enumerate()
    {
        if kept + arg.len() > MAX_COMMAND {
            let rest: usize = cmdline.len() - kept - i;
            out.push(format!("...({rest} more bytes)"));
            break;
        }
        kept += arg.len();
        out.push(String::from_utf8_lossy(arg).into_owned());
    }
    out
}

/// Bytes of the files in `dir` and its subdirectories (a dump keeps its records in
/// `segments/`: counting only the top level showed 0.0 MB for live dumps).
pub(crate) fn dir_bytes(dir: &std::path::Path) -> u64 {
    fn walk(dir: &std::path::Path, depth: u32) -> u64 {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| Some((e.path(), e.metadata().ok()?)))
            .map(|(path, m)| match () {
                _ if m.is_file() => m.len(),
                _ if m.is_dir() && depth < 4 => walk(&path, depth + 1),
                _ => 0,
            })
            .sum()
    }
    walk(dir, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_dumps_size_counts_its_segments() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cupti_monitor_meta.bin"), [0u8; 100]).unwrap();
        std::fs::create_dir(dir.path().join("segments")).unwrap();
        std::fs::write(dir.path().join("segments/seg-000000.cupmr"), [0u8; 5000]).unwrap();
        assert_eq!(dir_bytes(dir.path()), 5100);
    }

    #[test]
    fn a_huge_command_line_is_cut_to_fit_an_answer() {
        assert_eq!(
            short_command(b"python\0train.py\0\0"),
            ["python", "train.py"]
        );
        let mut huge = b"python\0".to_vec();
        for _ in 0..100_000 {
            huge.extend_from_slice(b"--flag=value\0");
        }
        let cut = short_command(&huge);
        let bytes: usize = cut.iter().map(String::len).sum();
        assert!(bytes <= MAX_COMMAND + 40, "{bytes}");
        assert_eq!(cut[0], "python");
        assert!(cut.last().unwrap().ends_with("more bytes)"), "{cut:?}");
    }
}
