//! `cupmon window TARGET`: open a trace window in every monitored process of a run
//! (or one dump, or one pid) at once, from any shell, wait, close them, and say what
//! each wrote; then write their traces (the processes write only the windows' JSON)
//! and combine the ranks' traces into one.

use std::thread;
use std::time::{Duration, Instant};

use anyhow::Result;
use cupmon_control::{find_processes, Client, Found, LastWindow, Request, Response};

use crate::cli::WindowArgs;
use crate::exit::BadInput;

/// One process's part of the window.
struct Part {
    found: Found,
    client: Client,
    /// Its rank, from its status answer, for messages.
    rank: Option<i64>,
    opened: Result<(), String>,
}

impl Part {
    /// `rank R (pid P)`, or `pid P` outside a distributed job.
    fn who(&self) -> String {
        match self.rank {
            Some(r) => format!("rank {r} (pid {})", self.found.control.pid),
            None => format!("pid {}", self.found.control.pid),
        }
    }
}

pub fn run(args: &WindowArgs) -> Result<i32> {
    if let Some(output) = &args.output {
        super::check_output_name(output, super::Writes::Trace)?;
    }
    let parts = live_processes(&args.target, args.timeout)?;
    let owner = "cupmon window".to_owned();
    let start = Request::StartWindow {
        owner,
        steps: args.steps,
    };
    // All at once: one thread per process, so the windows open together.
    let mut parts: Vec<Part> = thread::scope(|scope| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|(found, client, rank)| {
                let start = &start;
                scope.spawn(move || {
                    let opened = match client.call(start) {
                        Ok(Response::WindowStarted { .. }) => Ok(()),
                        Ok(Response::Error { message }) => Err(message),
                        Ok(other) => Err(format!("unexpected answer {other:?}")),
                        Err(e) => Err(e.to_string()),
                    };
                    Part {
                        found,
                        client,
                        rank,
                        opened,
                    }
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let open = parts.iter().filter(|p| p.opened.is_ok()).count();
    for p in parts.iter().filter(|p| p.opened.is_err()) {
        eprintln!(
            "cupmon: {} ({}): no window: {}",
            p.who(),
            p.found.dump_dir.display(),
            p.opened.as_ref().err().map_or("", String::as_str)
        );
    }
    if open == 0 {
        return Err(BadInput("no process opened a window".into()).into());
    }
    let written = match args.steps {
        Some(steps) => {
            eprintln!("cupmon: window open in {open} processes for {steps} steps");
            wait_for_steps(&mut parts, args.timeout_steps)
        }
        None => {
            let length = args.length;
            eprintln!(
                "cupmon: window open in {open} processes for {:.1} s",
                length.as_secs_f64()
            );
            thread::sleep(length);
            close_all(&parts)
        }
    };
    let mut traces = Vec::new();
    let mut failed = 0;
    for (part, result) in parts.iter().zip(written) {
        match result {
            // Only files inside the process's own dump directory: an answer naming
            // another file (a secret, a link out) would put it in the combined trace.
            Some(Ok(w)) => match part
                .found
                .own_window(&w)
                .map_err(|e| e.to_string())
                .and_then(|(json, trace)| {
                    let pid = part.found.control.pid;
                    super::shared::window_trace::trace_of_answer(&json, trace, &w, pid)
                        .map(|trace| (json, trace))
                        .map_err(|e| format!("{e:#}"))
                }) {
                Ok((json, trace)) => {
                    println!(
                        "{}: {} events: {}",
                        part.who(),
                        w.events,
                        trace.as_ref().unwrap_or(&json).display()
                    );
                    if let Some(t) = trace {
                        traces.push((t, json));
                    }
                }
                Err(e) => {
                    failed += 1;
                    eprintln!(
                        "cupmon: warning: {}: window not traced, not combined: {e}",
                        part.who()
                    );
                }
            },
            Some(Err(e)) => {
                failed += 1;
                eprintln!("cupmon: {}: {e}", part.who());
            }
            None => {}
        }
    }
    if traces.is_empty() {
        if let Some(out) = &args.output {
            eprintln!("cupmon: no trace to combine; {} not written", out.display());
        }
    } else if traces.len() > 1 || args.output.is_some() {
        let dir = std::path::Path::new(&args.target);
        let (output, stats) =
            super::combine::combine_windows(&traces, args.output.clone(), dir, unix_s())?;
        println!(
            "combined {} traces ({} events) into {}; open it in https://ui.perfetto.dev",
            traces.len(),
            stats.events,
            output.display()
        );
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

fn unix_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The processes of `target` that answer, with their ranks; the others are
/// reported, not waited on. All asked at once: `timeout` bounds the lot.
fn live_processes(target: &str, timeout: Duration) -> Result<Vec<(Found, Client, Option<i64>)>> {
    let found = find_processes(target).map_err(BadInput)?;
    let asked: Vec<_> = thread::scope(|scope| {
        let asks: Vec<_> = found
            .into_iter()
            .filter(|f| f.alive)
            .map(|f| {
                scope.spawn(move || {
                    let client = Client::of(&f, timeout);
                    let answer = match client.call(&Request::Status) {
                        Ok(Response::Status(s)) => f
                            .check_status(&s)
                            .map(|()| s.rank)
                            .map_err(|e| e.to_string()),
                        Ok(other) => Err(format!("{other:?}")),
                        Err(e) => Err(e.to_string()),
                    };
                    (f, client, answer)
                })
            })
            .collect();
        asks.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let mut live = Vec::new();
    for (f, client, answer) in asked {
        match answer {
            Ok(rank) => live.push((f, client, rank)),
            Err(e) => eprintln!("cupmon: pid {}: {e}", f.control.pid),
        }
    }
    if live.is_empty() {
        return Err(BadInput(format!("{target}: no monitored process is running there")).into());
    }
    Ok(live)
}

/// Close every window that opened; each answer in order (None where none opened).
fn close_all(parts: &[Part]) -> Vec<Option<Result<LastWindow, String>>> {
    thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .map(|p| {
                scope.spawn(move || {
                    p.opened.as_ref().ok()?;
                    Some(match p.client.call(&Request::EndWindow) {
                        Ok(Response::WindowWritten(w)) => Ok(w),
                        Ok(Response::Error { message }) => Err(message),
                        Ok(other) => Err(format!("unexpected answer {other:?}")),
                        Err(e) => Err(e.to_string()),
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect()
    })
}

/// Poll until each process has closed its window itself (after its steps), or the
/// timeout: then close what is still open and say so.
fn wait_for_steps(
    parts: &mut [Part],
    timeout: Duration,
) -> Vec<Option<Result<LastWindow, String>>> {
    let deadline = Instant::now() + timeout;
    let mut results: Vec<Option<Result<LastWindow, String>>> = vec![None; parts.len()];
    loop {
        let mut waiting = false;
        for (i, p) in parts.iter().enumerate() {
            if p.opened.is_err() || results[i].is_some() {
                continue;
            }
            match p.client.call(&Request::Status) {
                Ok(Response::Status(s)) if !s.window.open => {
                    results[i] = Some(
                        s.last_window
                            .clone()
                            .ok_or_else(|| "closed, no files".into()),
                    );
                }
                Ok(Response::Status(_)) => waiting = true,
                Ok(other) => results[i] = Some(Err(format!("unexpected answer {other:?}"))),
                Err(e) => results[i] = Some(Err(e.to_string())),
            }
        }
        if !waiting {
            return results;
        }
        if Instant::now() >= deadline {
            eprintln!(
                "cupmon: the steps did not come within {:.0} s (does the program call \
                 cupmon.step(), or use cupmon.torch's profiler steps?); closing the windows now",
                timeout.as_secs_f64()
            );
            let closed = close_all(parts);
            for (r, c) in results.iter_mut().zip(closed) {
                if r.is_none() {
                    *r = c;
                }
            }
            return results;
        }
        thread::sleep(Duration::from_millis(200));
    }
}
