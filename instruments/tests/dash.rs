//! The dashboard through its public API: a `Dash` in an `Overseer`, its modes and the CLI's
//! options. (What it aggregates and draws is tested inside the crate, in `src/dash/`.)

use giving_instruments::{Dash, DashMode, Overseer};

#[test]
fn a_plain_dash_runs_in_an_overseer() {
    let run = Overseer::new()
        .with(Dash::new().mode(DashMode::Plain).plot("lr"))
        .run(|| {
            for step in giving::iterate("train", 0..50u64) {
                let loss = 1.0 / (step as f64 + 1.0);
                giving::give!(loss);
            }
        });
    assert_eq!(run.exit_code(), 0);
    assert!(run.problems.is_empty(), "{:?}", run.problems);
}

#[test]
fn a_panicking_loop_still_finishes_the_dash() {
    let run = Overseer::new()
        .with(Dash::new().mode(DashMode::Plain))
        .quiet(true)
        .run(|| {
            giving::give!(loss = 0.5);
            panic!("diverged");
        });
    assert_eq!(run.exit_code(), 101);
    assert!(run.problems.is_empty(), "{:?}", run.problems);
}

/// Without a terminal, the terminal mode reports and falls back to plain lines: training goes
/// on. (Skipped where a terminal is at hand, so as not to take it over during `cargo test`.)
#[test]
fn without_a_terminal_the_terminal_mode_falls_back() {
    use std::io::IsTerminal;
    let tty = std::fs::File::open("/dev/tty").is_ok()
        || std::io::stdin().is_terminal()
        || std::io::stdout().is_terminal();
    if tty {
        eprintln!("skipped: a terminal is at hand");
        return;
    }
    let run = Overseer::new()
        .with(Dash::new().mode(DashMode::Terminal))
        .run(|| {
            for step in giving::iterate("train", 0..20u64) {
                giving::give!(step);
            }
            7
        });
    assert_eq!(run.output, Ok(7));
    assert!(run.problems.is_empty(), "{:?}", run.problems);
}

#[test]
fn dash_and_plot_options_add_the_dashboard_last() {
    use clap::Parser;
    use giving_instruments::InstrumentArgs;

    #[derive(Parser)]
    struct Train {
        #[command(flatten)]
        instruments: InstrumentArgs,
    }

    let args = Train::parse_from(["train", "--dash", "--plot", "lr", "--plot", "acc", "--stop"]);
    assert!(args.instruments.dash.dash);
    assert_eq!(args.instruments.dash.plot, ["lr", "acc"]);
    let instruments = args.instruments.instruments().unwrap();
    let names: Vec<&str> = instruments.iter().map(|i| i.name()).collect();
    assert_eq!(names, ["rate", "early-stop", "dash"]);
    let off = Train::parse_from(["train"])
        .instruments
        .instruments()
        .unwrap();
    assert!(off.iter().all(|i| i.name() != "dash"));
}
