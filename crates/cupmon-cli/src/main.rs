//! The `cupmon` command.

mod cli;
mod cmd;
mod exit;
mod progress;
mod size;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    let result = match cli.command {
        cli::Command::Merge(args) => cmd::merge::run(&args),
        cli::Command::Export(args) => cmd::export::run(&args),
        cli::Command::Decode(args) => cmd::decode::run(&args),
        cli::Command::Stats(args) => cmd::stats::run(&args),
        cli::Command::Demo(args) => cmd::demo::run(&args),
        cli::Command::Run(args) => cmd::run::run(&args),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            if exit::is_broken_pipe(&err) {
                // `cupmon stats ... | head` is not a failure.
                std::process::exit(0);
            }
            eprintln!("cupmon: error: {err:#}");
            std::process::exit(exit::code_for(&err));
        }
    }
}
