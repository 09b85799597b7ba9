use std::path::Path;
use std::time::Duration;

use super::*;

fn system() -> Placeholders {
    Placeholders {
        n_gpu: 0,
        n_cpu: 4,
        data: "/d".into(),
        runs: "/r".into(),
        giving: "/bin/giving".into(),
        ..Default::default()
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn load(text: &str) -> Result<Suite, ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    Suite::load(write(dir.path(), "s.yaml", text), &system())
}

#[test]
fn private_entries_never_run_and_inherits_chains_merge() {
    let suite = load(
        "_a:\n  command: [x]\n  max_duration: 5\n  argv: {--a: 1, --b: 2}\n_b:\n  inherits: _a\n  argv: {--b: 3}\n  tags: [t]\nc:\n  inherits: _b\n  weight: 2\n",
    )
    .unwrap();
    assert_eq!(suite.benches.len(), 1);
    let c = &suite.benches[0];
    assert_eq!(c.name, "c");
    assert_eq!(c.argv, ["--a", "1", "--b", "3"]);
    assert_eq!(c.tags, ["t"]);
    assert_eq!(c.weight, 2.0);
    assert_eq!(c.max_duration, Duration::from_secs(5));
}

#[test]
fn include_then_override() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "base.yaml",
        "a:\n  command: [x]\n  argv: {--lr: 0.1, --n: 1}\nb:\n  command: [y]\n",
    );
    let top = write(
        dir.path(),
        "top.yaml",
        "include: [base.yaml]\na:\n  argv: {--lr: 0.5}\n",
    );
    let suite = Suite::load(top, &system()).unwrap();
    assert_eq!(suite.benches.len(), 2);
    assert_eq!(suite.benches[0].argv, ["--lr", "0.5", "--n", "1"]);
}

#[test]
fn argv_as_map_or_list_and_flags() {
    let suite = load("a:\n  command: [x]\n  argv: {--on: true, --off: false, --k: v}\nb:\n  command: [x]\n  argv: [-v, 3]\n").unwrap();
    assert_eq!(suite.benches[0].argv, ["--on", "--k", "v"]);
    assert_eq!(suite.benches[1].argv, ["-v", "3"]);
}

#[test]
fn system_placeholders_are_filled() {
    let suite = load("a:\n  command: ['{giving}', train]\n  argv: {--w: '{cpu_per_gpu}', --g: '{n_gpu}', --data: '{data}/x', --runs: '{runs}'}\n").unwrap();
    assert_eq!(suite.benches[0].command, ["/bin/giving", "train"]);
    assert_eq!(
        suite.benches[0].argv,
        ["--w", "4", "--g", "0", "--data", "/d/x", "--runs", "/r"]
    );
}

#[test]
fn matrix_expands_names_and_argv() {
    let suite = load("m:\n  matrix:\n    bs: [1, 2]\n    lr: [a]\n  job:\n    name: 'm-{bs}-{lr}'\n    command: [x]\n    argv: {--bs: '{bs}', --cpus: '{cpu_per_gpu}'}\n").unwrap();
    let names: Vec<_> = suite.benches.iter().map(|b| b.name.clone()).collect();
    assert_eq!(names, ["m-1-a", "m-2-a"]);
    assert_eq!(suite.benches[1].argv, ["--bs", "2", "--cpus", "4"]);
}

#[test]
fn options_enabled_early_stop_usage_and_plan() {
    let suite = load(
        "a:\n  command: [x]\n  enabled: false\n  voir: {options: {stop: 60, skip: 5, interval: 1s}}\n  validation: {usage: {gpu_load_threshold: 0.5, gpu_mem_threshold: 0.25}}\n  plan: {method: njobs, n: 3}\n",
    )
    .unwrap();
    let a = &suite.benches[0];
    assert!(!a.enabled);
    assert_eq!(
        a.early_stop,
        EarlyStopOptions {
            stop: Some(60),
            skip: Some(5),
            interval: Some("1s".into())
        }
    );
    assert_eq!(
        a.usage,
        Some(UsageThresholds {
            gpu_load_threshold: 0.5,
            gpu_mem_threshold: 0.25
        })
    );
    assert_eq!(a.plan, Plan::Njobs { n: 3 });
    assert_eq!(suite.selected(&Selection::default()).count(), 0);
}

/// milabench's `validation/usage.py` `UsageCheck`: `get("gpu_load_threshold", 0.5)` and
/// `get("gpu_mem_threshold", 0.5)`; and `summary.py` `config.get("weight", 0)`.
#[test]
fn a_usage_threshold_not_given_is_milabench_s_half_and_the_weight_zero() {
    let suite =
        load("a:\n  command: [x]\n  validation: {usage: {gpu_mem_threshold: 0.25}}\n").unwrap();
    let a = &suite.benches[0];
    assert_eq!(
        a.usage,
        Some(UsageThresholds {
            gpu_load_threshold: 0.5,
            gpu_mem_threshold: 0.25
        })
    );
    assert_eq!(a.weight, 0.0);
}

#[test]
fn select_and_exclude_by_name_or_tag() {
    let suite = load("a:\n  command: [x]\n  tags: [fast]\nb:\n  command: [x]\n  tags: [slow]\nc:\n  command: [x]\n  tags: [fast, big]\n").unwrap();
    let names = |s: Selection| {
        suite
            .selected(&s)
            .map(|b| b.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(Selection::new(["fast"], [""; 0])), ["a", "c"]);
    assert_eq!(names(Selection::new(["fast,b"], ["big"])), ["a", "b"]);
    assert_eq!(names(Selection::new([""; 0], ["a"])), ["b", "c"]);
}

#[test]
fn errors_name_file_line_and_key() {
    let err = load("a:\n  command: [x]\n  plan:\n    method: sideways\n").unwrap_err();
    assert_eq!(err.key, "a.plan.method");
    assert_eq!(err.line, Some(4));
    assert!(
        err.to_string().ends_with(
            "s.yaml:4: a.plan.method: unknown method `sideways` (known: per_gpu, njobs)"
        ),
        "{err}"
    );

    let err = load("a:\n  command: [x]\n  argv: 3\n").unwrap_err();
    assert_eq!((err.key.as_str(), err.line), ("a.argv", Some(3)));

    // An unknown key is kept, with a warning naming its line (milabench's configurations
    // hold keys for milabench's own launchers).
    let suite = load("a:\n  command: [x]\n  max_duraton: 3\n").unwrap();
    assert_eq!(suite.benches[0].extra["max_duraton"], 3);
    assert_eq!(suite.warnings.len(), 1);
    assert!(
        suite.warnings[0].contains("s.yaml:3: a.max_duraton: not used by giving"),
        "{:?}",
        suite.warnings
    );

    let err = load("a:\n  command: [x]\n  voir: {options: {stop: 0}}\n").unwrap_err();
    assert_eq!(
        (err.key.as_str(), err.line),
        ("a.voir.options.stop", Some(3))
    );
    assert!(
        err.message
            .contains("expected a whole number from 1, found 0"),
        "{err}"
    );
    let suite = load("a:\n  command: [x]\n  voir: {options: {stop: 1, skip: 0}}\n").unwrap();
    assert_eq!(
        suite.benches[0].early_stop.skip,
        Some(0),
        "no warm-up skipped"
    );

    let err = load("a:\n  command: [x]\n  argv: ['{nope}']\n").unwrap_err();
    assert_eq!((err.key.as_str(), err.line), ("a.argv", Some(3)));
    assert!(err.message.contains("unknown placeholder `{nope}`"));
}

#[test]
fn errors_in_inherited_keys_name_the_parent_line() {
    let err = load("_p:\n  command: [x]\n  weight: heavy\nc:\n  inherits: _p\n").unwrap_err();
    assert_eq!((err.key.as_str(), err.line), ("c.weight", Some(3)));
}

#[test]
fn inherits_errors() {
    let err = load("a:\n  inherits: b\n  command: [x]\nb:\n  inherits: a\n").unwrap_err();
    assert_eq!((err.key.as_str(), err.line), ("b.inherits", Some(5)));
    assert!(err.message.contains("cycle"), "{err}");
    let err = load("a:\n  command: [x]\n  inherits: nobody\n").unwrap_err();
    assert!(err.message.contains("no entry named `nobody`"));
}

#[test]
fn yaml_syntax_errors_name_the_line() {
    let err = load("a:\n  command: [x\n  argv: 1\n").unwrap_err();
    assert_eq!(err.key, "(file)");
    assert!(err.line.is_some());
    let dir = tempfile::tempdir().unwrap();
    let shown = err.to_string();
    let at = format!(":{}: not valid YAML: ", err.line.unwrap());
    assert!(shown.contains(&at), "{shown}");
    assert!(!shown.contains("(file)"), "{shown}");
    let missing = dir.path().join("missing.yaml");
    let err = Suite::load(missing.clone(), &system()).unwrap_err();
    assert!(err.message.starts_with("cannot read"));
    // Neither a line nor a key it does not have.
    let shown = err.to_string();
    assert!(
        shown.starts_with(&format!("{}: cannot read: ", missing.display())),
        "{shown}"
    );
    assert!(
        !shown.contains(":?") && !shown.contains("(file)"),
        "{shown}"
    );
}

#[test]
fn star_entry_tags_along_inherits_and_milabench_placeholders() {
    let suite = load(
        "'*':\n  max_duration: 7\n_p:\n  command: [x]\n  tags: [vision, b]\n  argv: {--w: 'auto({n_worker}, 3)', --bs: auto_batch(16), --d: '{milabench_data}/x', --n: '${..max_duration}'}\nc:\n  inherits: _p\n  tags: [a, vision]\n  max_duration: 9\n",
    )
    .unwrap();
    let c = &suite.benches[0];
    assert_eq!(c.tags, ["a", "b", "vision"]);
    // `"*"` is merged last: it wins over the benchmark's own value.
    assert_eq!(c.max_duration, Duration::from_secs(7));
    assert_eq!(
        c.argv,
        ["--w", "3", "--bs", "16", "--d", "/d/x", "--n", "7"]
    );
    assert!(Selection::new(["b"], [] as [&str; 0]).accepts(c));
}

#[test]
fn a_definition_without_command_runs_its_main_under_voir() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "s.yaml",
        "bert:\n  definition: ../benchmarks/hf\n  group: hf\n  install_group: torch\n  voir: {options: {stop: 30, gpu_poll: 0.1}}\n  use_deepspeed: true\n  argv: {--data: '{milabench_code}/d'}\n",
    );
    let system = Placeholders {
        base: Some("/b".into()),
        ..system()
    };
    let suite = Suite::load(&file, &system).unwrap();
    let b = &suite.benches[0];
    let code = dir.path().parent().unwrap().join("benchmarks/hf");
    assert_eq!(b.definition.as_deref(), Some(code.as_path()));
    assert_eq!(
        b.command,
        [
            "/b/venv/torch/bin/voir".to_owned(),
            code.join("main.py").display().to_string()
        ]
    );
    assert_eq!(
        b.argv,
        ["--data".to_owned(), code.join("d").display().to_string()]
    );
    assert_eq!(b.dirs.extra, Path::new("/b/extra/hf"));
    assert_eq!(
        b.voir,
        Some(serde_json::json!({"options": {"stop": 30, "gpu_poll": 0.1}}))
    );
    assert_eq!(b.extra["use_deepspeed"], true);
    let config: serde_json::Value = serde_json::from_str(&b.env["MILABENCH_CONFIG"]).unwrap();
    assert_eq!(config["name"], "bert");
    assert_eq!(config["group"], "hf");
    assert_eq!(config["dirs"]["extra"], "/b/extra/hf");
    assert_eq!(config["system"]["nodes"][0]["ip"], "127.0.0.1");
    assert!(
        suite.warnings[0].contains("bert.use_deepspeed"),
        "{:?}",
        suite.warnings
    );
}

#[test]
fn unsatisfied_capabilities_skip_the_benchmark() {
    let suite = load(
        "two:\n  command: [x]\n  num_machines: 2\n  requires_capabilities: ['len(nodes) >= ${..num_machines}']\none:\n  command: [x]\n  requires_capabilities: [\"gpu['count'] >= 0\"]\n",
    )
    .unwrap();
    let all = Selection::default();
    let run: Vec<_> = suite.selected(&all).map(|b| b.name.as_str()).collect();
    assert_eq!(run, ["one"]);
    let skipped: Vec<_> = suite.skipped(&all).collect();
    assert_eq!(skipped.len(), 1);
    assert_eq!(
        skipped[0].1,
        "requires_capabilities: `len(nodes) >= 2` is not satisfied"
    );
}

#[test]
fn an_entry_with_nothing_to_run_is_skipped_with_why() {
    let suite = load(
        "retired:\n  enabled: true\n  weight: 1\nmultirun:\n  runs: []\nok:\n  command: [x]\n",
    )
    .unwrap();
    let all = Selection::default();
    let run: Vec<_> = suite.selected(&all).map(|b| b.name.as_str()).collect();
    assert_eq!(run, ["ok"]);
    let skipped: Vec<_> = suite
        .skipped(&all)
        .map(|(b, why)| (b.name.as_str(), why))
        .collect();
    assert_eq!(skipped.len(), 2);
    assert_eq!(skipped[0].0, "retired");
    assert!(
        skipped[0].1.starts_with("nothing to run"),
        "{}",
        skipped[0].1
    );
}

#[test]
fn defaults_may_be_inherited_without_being_defined_as_in_milabench() {
    let suite = load("a:\n  inherits: _defaults\n  command: [x]\n").unwrap();
    assert_eq!(suite.benches[0].name, "a");
    assert!(load("a:\n  inherits: _nope\n  command: [x]\n").is_err());
}

/// Found by the `suite_config` fuzz target: a `max_duration` too large for a `Duration` (or
/// not a positive number) is an error naming the key, not a panic.
#[test]
fn a_max_duration_no_duration_can_hold_is_refused_naming_the_key() {
    for value in ["1e300", "-1", "0", ".nan", ".inf"] {
        let error = load(&format!("a:\n  command: [x]\n  max_duration: {value}\n"))
            .unwrap_err()
            .to_string();
        assert!(error.contains("max_duration"), "{value}: {error}");
    }
}
