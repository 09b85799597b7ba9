//! [`Launcher`]: how a milabench benchmark's `main.py` is started.

use serde::Serialize;

/// How a milabench benchmark's `main.py` is started: what its `benchfile.py`'s
/// `build_run_plan` builds. giving knows milabench's own benchmarks by their folder's name
/// (`torchvision_ddp`, `diffusion`, …); `launcher:` names it for others.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Launcher {
    /// The bench's own `command:`, as written.
    #[default]
    Command,
    /// `{venv}/bin/voir --config FILE main.py ARGV` (milabench's default `VoirCommand`).
    Voir,
    /// `main.py ARGV` alone (milabench's bare `PackCommand`).
    Script,
    /// `activator {venv} {cache} main.py ARGV` (`ActivatorCommand`).
    Activator,
    /// voir under `benchrun` (torchrun) when the process has several GPUs
    /// (`TorchrunAllNodes`).
    Torchrun,
    /// `accelerate launch` when the process has several GPUs or nodes, else `main.py` alone
    /// (`AccelerateAllNodes`).
    Accelerate,
    /// `voir` (from the `PATH`) under `benchrun -m` when the process has several GPUs (timm's
    /// `TorchRunCommand(VoirCommand(…, module=True), module=True)`).
    TorchrunModule,
    /// `python -m torchtune._cli.tune run [torchrun options] -- ARGV` (`TorchtuneAllNodes`).
    Torchtune,
}

impl Launcher {
    pub(crate) fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "voir" => Self::Voir,
            "script" => Self::Script,
            "activator" => Self::Activator,
            "torchrun" => Self::Torchrun,
            "accelerate" => Self::Accelerate,
            "torchtune" => Self::Torchtune,
            "torchrun_module" => Self::TorchrunModule,
            _ => return None,
        })
    }
}
