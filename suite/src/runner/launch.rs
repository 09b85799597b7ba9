//! What a benchmark process is started with: its command line and the variables that carry
//! the suite's early-stop options to it.

use std::path::{Path, PathBuf};

use giving_instruments::child::RATE_SKIP;

use crate::config::{Bench, EarlyStopOptions};

use super::plan::ProcessPlan;

/// A process's command line and variables, and the voir configuration file it reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Launch {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// The bench's variables, the plan's device selection, [`RATE_SKIP`].
    pub env: Vec<(String, String)>,
    /// For a voir benchmark: `{stem}.voirconf.json` and what to write there.
    pub voir_config: Option<(PathBuf, serde_json::Value)>,
}

/// How to start `bench`'s process `plan`, whose files are `{stem}.*`.
///
/// The early-stop options reach a giving program as `GIVING_STOP` (set by the process
/// runner) and [`RATE_SKIP`]; a voir program (the command's program is `voir`) gets them as
/// milabench gives them, `voir --config {stem}.voirconf.json …` with the bench's `voir`
/// section, `{"options": {"stop", "skip", "interval"}}`.
pub(crate) fn launch(bench: &Bench, plan: &ProcessPlan, stem: &Path) -> Launch {
    let mut argv = bench.command_line();
    let mut env: Vec<(String, String)> = bench
        .env
        .iter()
        .chain(&plan.env)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(skip) = bench.early_stop.skip {
        env.push((RATE_SKIP.to_owned(), skip.to_string()));
    }
    let voir_config =
        (is_voir(&argv) && bench.early_stop != EarlyStopOptions::default()).then(|| {
            let path = PathBuf::from(format!("{}.voirconf.json", stem.display()));
            argv.splice(1..1, ["--config".to_owned(), path.display().to_string()]);
            (path, voir_options(&bench.early_stop))
        });
    Launch {
        argv,
        env,
        voir_config,
    }
}

/// Whether the program is voir's command line (`voir`, or a path to it).
pub(crate) fn is_voir(argv: &[String]) -> bool {
    argv.first()
        .and_then(|p| Path::new(p).file_name())
        .is_some_and(|name| name == "voir")
}

/// The `voir` section as milabench writes it for voir: only the options that were set.
fn voir_options(options: &EarlyStopOptions) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    if let Some(stop) = options.stop {
        map.insert("stop".to_owned(), stop.into());
    }
    if let Some(skip) = options.skip {
        map.insert("skip".to_owned(), skip.into());
    }
    if let Some(interval) = &options.interval {
        map.insert("interval".to_owned(), interval.clone().into());
    }
    serde_json::json!({ "options": map })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::config::{Placeholders, Suite};

    fn bench(yaml: &str) -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.yaml");
        std::fs::write(&file, yaml).unwrap();
        let placeholders = Placeholders {
            n_gpu: 0,
            n_cpu: 1,
            data: "d".into(),
            runs: "r".into(),
            giving: "giving".into(),
            ..Default::default()
        };
        Suite::load(&file, &placeholders).unwrap().benches.remove(0)
    }

    fn cpu() -> ProcessPlan {
        ProcessPlan {
            tag: "D0".to_owned(),
            device: None,
            env: BTreeMap::new(),
        }
    }

    #[test]
    fn a_voir_benchmark_reads_its_options_from_a_config_file() {
        let b = bench(
            "py:\n  command: [/venv/bin/voir, main.py]\n  argv: [--lr, 1]\n  voir: {options: {stop: 5, interval: 1s}}\n",
        );
        let launch = launch(&b, &cpu(), Path::new("runs/x/py.D0"));
        assert_eq!(
            launch.argv,
            [
                "/venv/bin/voir",
                "--config",
                "runs/x/py.D0.voirconf.json",
                "main.py",
                "--lr",
                "1"
            ]
        );
        let (path, config) = launch.voir_config.unwrap();
        assert_eq!(path, Path::new("runs/x/py.D0.voirconf.json"));
        assert_eq!(
            config,
            serde_json::json!({"options": {"stop": 5, "interval": "1s"}})
        );
        assert!(launch.env.is_empty(), "{:?}", launch.env);
    }

    #[test]
    fn a_giving_benchmark_gets_the_skip_in_its_environment() {
        let b = bench(
            "rs:\n  command: [giving, train, mlp]\n  env: {A: b}\n  voir: {options: {stop: 5, skip: 2}}\n",
        );
        let mut plan = cpu();
        plan.env
            .insert("CUDA_VISIBLE_DEVICES".to_owned(), "1".to_owned());
        let launch = launch(&b, &plan, Path::new("rs.D1"));
        assert_eq!(launch.argv, ["giving", "train", "mlp"]);
        assert_eq!(launch.voir_config, None);
        assert_eq!(
            launch.env,
            [
                ("A".to_owned(), "b".to_owned()),
                ("CUDA_VISIBLE_DEVICES".to_owned(), "1".to_owned()),
                (RATE_SKIP.to_owned(), "2".to_owned())
            ]
        );
    }
}
