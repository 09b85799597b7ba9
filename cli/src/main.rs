//! The `giving` command: trains the bundled models and shows what their loops give.
//!
//! ```text
//! giving train <mlp|cnn|charlm> [--device D] [--steps N | --epochs N] [--batch-size N] [--lr X] [--seed N]
//!                                [--log DIR] [--stop [N]] [--gpu-poll [SECS]] [--cpu-poll [SECS]]
//!                                [--dash [--plot KEY]...] [--probe SELECTOR]...
//!                                [--trace FILE [--trace-format json]] [--web [ADDR] [--web-allow-stop]]
//! giving bench <mlp|cnn|charlm> [--device D] [--steps N] [--repeats N]
//! giving bench fanin [--ranks 1,8,64] [--rate 1000] [--seconds 10] [--hog | --quiet-and-hog] [--server URL]
//! giving log dump FILE [--json]
//! giving log stats FILE
//! giving log serve FILE... [--web ADDR]
//! giving probes [FILTER]
//! giving trace LOG... -o FILE [--format perfetto|json]
//! giving suite run CONFIG [--select NAME|TAG]... [--exclude NAME|TAG]... [--runs DIR] [--repeat N] [--dash] [--web [ADDR]]
//! giving suite report RUNDIR... [--compare BASE] [--html FILE]
//! giving watch nats://HOST:PORT --run NAME [--replay] [--until-done] [--idle SECS] [--log DIR] [--trace FILE] [--dash] [--web [ADDR]]
//! giving tune [vgg|vgg16-width] [--device D] [--max-iter N] [--qos-tuner-threshold X] [--qos-keep-threshold X] [--absolute]
//!             [--take-best-n N] [--cost-model linear|measured] [--qos-model empirical|p1|p2] [--lr X] [--out DIR] [--cache DIR]
//!             [--dash] [--log DIR] [--trace FILE]
//! giving tune --list-knobs
//! giving tune apply CONFIGS [--index N]
//! ```

mod bench;
mod bench_fanin;
mod common;
mod cpu_backend;
mod cpu_time;
mod exit;
mod log_serve;
mod median_interval;
mod nats_auth;
mod out;
mod probes;
mod publish;
mod suite;
mod trace;
mod train;
mod tune;
mod watch;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use bench::BenchArgs;
use log_serve::LogCli;
use probes::ProbesArgs;
use suite::SuiteCommand;
use trace::TraceCommandArgs;
use train::TrainArgs;
use tune::TuneArgs;
use watch::WatchArgs;

/// Train the bundled burn models and watch what their training loops give.
#[derive(Debug, Parser)]
#[command(name = "giving", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Train a model, printing progress from a pipeline subscribed to the loop's events.
    Train(TrainArgs),
    /// Measure training throughput (items/s) bare and with one subscriber, in the same process.
    Bench(BenchArgs),
    /// Read a MessagePack log written by `train --log`, or replay logs in the web dashboard.
    #[command(subcommand)]
    Log(LogCli),
    /// List the functions instrumented with #[probe] (the models' `fit` and `forward`), with
    /// the variables `train --probe` can observe.
    Probes(ProbesArgs),
    /// Convert MessagePack logs into one timeline (Perfetto or Chrome JSON).
    Trace(TraceCommandArgs),
    /// Run benchmark suites described in milabench's YAML (docs/suite.md).
    #[command(subcommand)]
    Suite(SuiteCommand),
    /// Watch every rank of a run published to NATS (`train --publish`), as one stream.
    Watch(WatchArgs),
    /// Tune the bundled VGG's convolutions for speed under a QoS threshold (PredTuner), or
    /// apply a configuration found (docs/tuner.md).
    Tune(TuneArgs),
}

fn main() -> ExitCode {
    // Before anything allocates or runs burn.
    cpu_backend::configure();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Usage errors end with code 2 (clap's convention), `--help` and `--version` with 0,
        // printed as clap prints them, but returned rather than `process::exit`ed.
        Err(usage) => {
            // Nothing is left to tell the user if stdout or stderr is gone.
            let _ = usage.print();
            return exit::exit_code(usage.exit_code());
        }
    };
    match run(cli.command) {
        Ok(code) => code,
        Err(error) => {
            exit::report(&error);
            ExitCode::FAILURE
        }
    }
}

/// Runs one command: every command ends here, with its exit code or an error (exit code 1).
fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Train(args) => train::train(args),
        Command::Bench(args) => bench::bench(args).map(|()| ExitCode::SUCCESS),
        Command::Probes(args) => probes::list(args).map(|()| ExitCode::SUCCESS),
        Command::Suite(command) => suite::suite(command),
        Command::Watch(args) => watch::watch(args),
        Command::Tune(args) => tune::tune(args),
        Command::Trace(args) => trace::trace(args).map(|()| ExitCode::SUCCESS),
        // A log that reads but is cut or damaged is not an error: what could be read was
        // printed; the exit code says how whole it is (0 clean, 3 cut, 4 corrupt).
        Command::Log(command) => command.run(),
    }
}
