//! The `cupmon` command.

mod cli;
mod cmd;
mod exit;
mod interrupt;
mod local_time;
mod progress;
mod setting_args;
mod slice_args;
mod verified_cache;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    // `cupmon run` forwards signals to its program (cmd::run) instead.
    if !matches!(cli.command, cli::Command::Run(_)) {
        interrupt::clean_up_on_signals();
    }
    let result = match cli.command {
        cli::Command::Merge(args) => cmd::merge::run(&args),
        cli::Command::Export(args) => cmd::export::run(&args),
        cli::Command::Decode(args) => cmd::decode::run(&args),
        cli::Command::Stats(args) => cmd::stats::run(&args),
        cli::Command::Demo(args) => cmd::demo::run(&args),
        cli::Command::Run(args) => cmd::run::run(&args),
        cli::Command::Window(args) => cmd::window::run(&args),
        cli::Command::Status(args) => cmd::status::run(&args),
        cli::Command::Diagnose(args) => cmd::diagnose::run(&args),
        cli::Command::HangDump(args) => cmd::hang_dump::run(&args),
        cli::Command::Combine(args) => cmd::combine::run(&args),
        cli::Command::Report(args) => cmd::report::run(&args),
        cli::Command::ExportParquet(args) => cmd::export_parquet::run(&args),
        cli::Command::Sql(args) => cmd::sql::run(&args),
        cli::Command::Stragglers(args) => cmd::stragglers::run(&args),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            if exit::is_broken_pipe(&err) {
                // `cupmon stats ... | head` is not a failure.
                std::process::exit(0);
            }
            eprintln!("cupmon: error: {}", exit::message(&err));
            std::process::exit(exit::code_for(&err));
        }
    }
}
