//! `cupmon run --window-on-signal`: SIGUSR2 to cupmon itself (never to the launcher
//! it runs, which would die of it) opens a trace window in every monitored process of
//! the run through their control channels; the next one closes them and writes the
//! traces, combined.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use cupmon_control::{find_processes, Client, Found, Request, Response};

use super::RunId;

/// Catch SIGUSR2 and toggle the run's windows on a thread of its own (in this run's
/// processes only: another run may write into the same output directory).
pub fn toggle_windows_on_sigusr2(output: &Path, run: RunId) -> Result<()> {
    let flag = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGUSR2, Arc::clone(&flag))
        .context("installing the SIGUSR2 handler")?;
    let output = output.to_path_buf();
    std::thread::Builder::new()
        .name("cupmon-sigusr2".into())
        .spawn(move || {
            let mut open = false;
            loop {
                std::thread::sleep(Duration::from_millis(100));
                if flag.swap(false, Ordering::Relaxed) {
                    open = if open {
                        close(&output, &run)
                    } else {
                        open_all(&output, &run)
                    };
                }
            }
        })
        .context("starting the SIGUSR2 thread")?;
    Ok(())
}

fn clients(output: &Path, run: &RunId) -> Vec<(Found, Client)> {
    find_processes(&output.display().to_string())
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f.alive && run.owns(&f.dump_dir))
        .map(|f| {
            let client = Client::of(&f, Duration::from_secs(30));
            (f, client)
        })
        .collect()
}

/// Open a window everywhere; true when at least one opened.
fn open_all(output: &Path, run: &RunId) -> bool {
    let start = Request::StartWindow {
        owner: "SIGUSR2 to cupmon run".into(),
        steps: None,
    };
    let mut opened = 0;
    for (found, client) in clients(output, run) {
        let pid = found.control.pid;
        match client.call(&start) {
            Ok(Response::WindowStarted { .. }) => opened += 1,
            Ok(Response::Error { message }) => eprintln!("cupmon: pid {pid}: no window: {message}"),
            Ok(other) => eprintln!("cupmon: pid {pid}: {other:?}"),
            Err(e) => eprintln!("cupmon: pid {pid}: {e}"),
        }
    }
    eprintln!("cupmon: trace window opened in {opened} processes (SIGUSR2 again closes it)");
    opened > 0
}

/// Close the windows, say where they went, combine them; false (closed).
fn close(output: &Path, run: &RunId) -> bool {
    let mut traces: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (found, client) in clients(output, run) {
        let pid = found.control.pid;
        match client.call(&Request::EndWindow) {
            // Only files inside the process's own dump directory go into the combine.
            Ok(Response::WindowWritten(w)) => match found
                .own_window(&w)
                .map_err(|e| e.to_string())
                .and_then(|(json, trace)| {
                    crate::cmd::shared::window_trace::trace_of_answer(&json, trace, &w, pid)
                        .map(|trace| (json, trace))
                        .map_err(|e| format!("{e:#}"))
                }) {
                Ok((json, trace)) => {
                    eprintln!(
                        "cupmon: pid {pid}: {} events: {}",
                        w.events,
                        trace.as_ref().unwrap_or(&json).display()
                    );
                    if let Some(t) = trace {
                        traces.push((t, json));
                    }
                }
                Err(e) => {
                    eprintln!("cupmon: warning: pid {pid}: window not traced, not combined: {e}")
                }
            },
            Ok(Response::Error { message }) => eprintln!("cupmon: pid {pid}: {message}"),
            Ok(other) => eprintln!("cupmon: pid {pid}: {other:?}"),
            Err(e) => eprintln!("cupmon: pid {pid}: {e}"),
        }
    }
    if traces.len() > 1 {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        match crate::cmd::combine::combine_windows(&traces, None, output, stamp) {
            Ok((out, stats)) => eprintln!(
                "cupmon: combined {} traces ({} events) into {}",
                traces.len(),
                stats.events,
                out.display()
            ),
            Err(e) => eprintln!("cupmon: combining the windows: {e:#}"),
        }
    }
    false
}
