//! What milabench's own benchmarks' `benchfile.py` say in Python (commit faf39234), which
//! giving does not run: the launcher, the main script, the variables added to `make_env`.
//! Known by the definition folder's name; `launcher:` and `env:` say it for other benchmarks.

use super::launcher::Launcher;

/// One milabench benchmark folder's `benchfile.py`, as far as a plan needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Benchfile {
    /// Its `build_run_plan`.
    pub(crate) launcher: Launcher,
    /// Its `main_script`: a file, or a module run with `-m`.
    pub(crate) main: Main,
    /// What its `make_env` adds; `{cache}` is the benchmark's cache folder.
    pub(crate) env: &'static [(&'static str, &'static str)],
    /// Its arguments are `server.argv`, `--`, `client.argv` (vllm's `argv`), not `argv`.
    pub(crate) server_client: bool,
    /// The program before the main script, when it is not voir (llama's `python`).
    pub(crate) program: Option<&'static str>,
    /// Arguments its `argv` or command adds after the configured ones; `{data}` and
    /// `{cache}` are the benchmark's folders.
    pub(crate) tail: &'static [&'static str],
}

/// A benchmark's `main_script`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Main {
    /// A file in the definition's folder.
    File(&'static str),
    /// A folder in it, run as a module (`-m bench`).
    Module(&'static str),
}

const XLA: &[(&str, &str)] = &[("XLA_PYTHON_CLIENT_PREALLOCATE", "False")];
const CUDA_BUILD: &[(&str, &str)] = &[("FORCE_CUDA", "1"), ("CUDA_HOME", "/usr/local/cuda/")];
const HPU: &[(&str, &str)] = &[("PT_HPU_LAZY_MODE", "0")];
// milabench writes the first two names with a trailing space, which FlashInfer does not
// read; giving sets the names FlashInfer reads.
const FLASHINFER: &[(&str, &str)] = &[
    ("FLASHINFER_CACHE_DIR", "{cache}/flashinfer"),
    ("FLASHINFER_CUBIN_DIR", "{cache}/flashinfer/cubins"),
    ("FLASHINFER_WORKSPACE_DIR", "{cache}/flashinfer/workspace"),
];

/// The `benchfile.py` of milabench's folder `name` (any other: voir on `main.py`).
pub(crate) fn of_folder(name: &str) -> Benchfile {
    let (launcher, main, env) = match name {
        "torchvision_ddp" => (Launcher::Activator, Main::File("main.py"), &[][..]),
        "accelerate_opt" | "diffusion" | "rlhf" => {
            (Launcher::Accelerate, Main::File("main.py"), &[][..])
        }
        "llava" => (Launcher::Accelerate, Main::File("main.py"), HPU),
        "dinov2" | "lightning" => (Launcher::Torchrun, Main::File("main.py"), &[][..]),
        "vjepa" => (Launcher::Torchrun, Main::File("main.py"), HPU),
        "llm" => (Launcher::Torchtune, Main::File("main.py"), &[][..]),
        "flops" => (Launcher::Script, Main::File("main.py"), &[][..]),
        "huggingface" => (Launcher::Voir, Main::Module("bench"), &[][..]),
        "brax" | "purejaxrl" => (Launcher::Voir, Main::File("main.py"), XLA),
        "geo_gnn" | "recursiongfn" => (Launcher::Voir, Main::File("main.py"), CUDA_BUILD),
        "vllm" => (Launcher::Voir, Main::File("main.py"), FLASHINFER),
        "timm" => (
            Launcher::TorchrunModule,
            Main::File("pytorch-image-models/train.py"),
            &[][..],
        ),
        "llama" => (Launcher::Script, Main::File("main.py"), &[][..]),
        _ => (Launcher::Voir, Main::File("main.py"), &[][..]),
    };
    let (program, tail): (_, &[&str]) = match name {
        "timm" => (None, &["--output", "{data}", "--checkpoint-hist", "1"]),
        "llama" => (Some("python"), &["--cache", "{cache}"]),
        _ => (None, &[]),
    };
    Benchfile {
        launcher,
        main,
        env,
        server_client: name == "vllm",
        program,
        tail,
    }
}
