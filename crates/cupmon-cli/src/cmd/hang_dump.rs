//! `cupmon hang-dump TARGET`: every monitored process TARGET names writes a hang
//! record into its dump now, through its control channel.

use std::time::Duration;

use anyhow::Result;
use cupmon_control::{find_processes, Client, Found, Request, Response};

use crate::cli::HangDumpArgs;
use crate::exit::BadInput;

pub fn run(args: &HangDumpArgs) -> Result<i32> {
    let found = find_processes(&args.target).map_err(BadInput)?;
    let alive: Vec<&Found> = found.iter().filter(|f| f.alive).collect();
    if alive.is_empty() {
        return Err(BadInput(format!(
            "{}: no running monitored process ({} exited)",
            args.target,
            found.len()
        ))
        .into());
    }
    // All at once: every rank's record shows the same moment.
    let answers: Vec<Result<String, String>> = std::thread::scope(|scope| {
        let asks: Vec<_> = alive
            .iter()
            .map(|f| scope.spawn(|| ask(f, args.timeout)))
            .collect();
        asks.into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("no answer".into())))
            .collect()
    });
    let mut failed = 0;
    for (f, answer) in alive.iter().zip(answers) {
        match answer {
            Ok(path) => println!("pid {}: {path}", f.control.pid),
            Err(why) => {
                failed += 1;
                eprintln!(
                    "cupmon: warning: pid {} ({}): no hang record: {why}",
                    f.control.pid,
                    f.dump_dir.display()
                );
            }
        }
    }
    if failed == alive.len() {
        anyhow::bail!("no process wrote a hang record");
    }
    println!("then: cupmon diagnose {}", args.target);
    Ok(0)
}

fn ask(f: &Found, timeout: Duration) -> Result<String, String> {
    let request = Request::HangDump {
        owner: "cupmon hang-dump".into(),
    };
    match Client::of(f, timeout).call(&request) {
        Ok(Response::HangRecorded { path }) => {
            // The path must lie in the dump the process was found by (a planted
            // control file cannot send the user elsewhere).
            let canonical = |p: &std::path::Path| p.canonicalize().unwrap_or_else(|_| p.to_owned());
            if canonical(std::path::Path::new(&path)).starts_with(canonical(&f.dump_dir)) {
                Ok(path)
            } else {
                Err(format!("it named a file outside its dump: {path}"))
            }
        }
        Ok(Response::Error { message }) => Err(message),
        Ok(other) => Err(format!("unexpected answer {other:?}")),
        Err(e) => Err(e.to_string()),
    }
}
