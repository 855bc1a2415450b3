//! The `ststui` binary. On this branch: the headless simulator and the soak (`ststui sim
//! --headless`, `ststui sim --soak N`); the console's composition root lives on the app branch.

use clap::Parser;
use ststui::cli::{Cli, Command};

fn main() {
    let cli = Cli::parse();
    let code = match &cli.command {
        Some(Command::Sim(args)) if args.soak.is_some() => {
            eprintln!("ststui: --soak needs core::invariants (not merged yet)");
            2
        }
        Some(Command::Sim(args)) if args.headless => ststui::sim::headless::run(args),
        _ => {
            eprintln!(
                "ststui: only `ststui sim --headless` and `ststui sim --soak N` are built here"
            );
            2
        }
    };
    std::process::exit(code);
}
