//! Options shared by `giving train` and `giving bench`: the model, device and training settings.

use anyhow::{Result, bail};
use clap::{ArgMatches, Args, FromArgMatches};
use giving_models::{DeviceSpec, ModelKind, TrainConfig};

/// Options shared by `train` and `bench`.
#[derive(Debug, Args)]
pub(crate) struct Common {
    /// The model: mlp, cnn or charlm.
    // Required, but an `Option`: `giving bench fanin` (a subcommand of `bench`) has no model,
    // and clap's derive cannot build a plain field that a subcommand made optional.
    #[arg(value_parser = parse_model, required = true)]
    model: Option<ModelKind>,
    /// Device: flex (CPU), wgpu, wgpu:N, cuda or cuda:N (among the backends compiled in).
    #[arg(long, value_parser = parse_device, default_value_t = DeviceSpec::default())]
    pub(crate) device: DeviceSpec,
    /// The training settings' flags, declared on [`TrainConfig`] itself.
    #[command(flatten)]
    settings: Overrides<TrainConfig>,
}

impl Common {
    /// The model named on the command line.
    pub(crate) fn model(&self) -> Result<ModelKind> {
        self.model
            .ok_or_else(|| anyhow::anyhow!("a model is required: mlp, cnn or charlm"))
    }

    /// The model's default settings, updated by the flags given.
    pub(crate) fn config(&self) -> Result<TrainConfig> {
        let mut config = self.model()?.default_config();
        self.settings.apply(&mut config)?;
        Ok(config)
    }
}

/// The flags of a settings type `T` whose defaults are only known after parsing (the model's):
/// kept as matches, then applied over a default `T` with
/// [`FromArgMatches::update_from_arg_matches`], which sets only the flags given.
#[derive(Debug, Clone)]
pub(crate) struct Overrides<T> {
    matches: ArgMatches,
    settings: std::marker::PhantomData<T>,
}

impl<T: FromArgMatches> Overrides<T> {
    /// Sets on `target` the settings given on the command line.
    pub(crate) fn apply(&self, target: &mut T) -> Result<()> {
        target.update_from_arg_matches(&self.matches)?;
        Ok(())
    }
}

impl<T: FromArgMatches> FromArgMatches for Overrides<T> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self {
            matches: matches.clone(),
            settings: std::marker::PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.matches = matches.clone();
        Ok(())
    }
}

impl<T: Args> Args for Overrides<T> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        T::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        T::augment_args_for_update(cmd)
    }
}

fn parse_model(s: &str) -> Result<ModelKind, String> {
    s.parse().map_err(|e: giving_models::Error| e.to_string())
}

fn parse_device(s: &str) -> Result<DeviceSpec, String> {
    s.parse().map_err(|e: giving_models::Error| e.to_string())
}

/// Checks that the device's backend is compiled in before generating any data.
pub(crate) fn check_device(device: &DeviceSpec) -> Result<()> {
    if !device.is_compiled() {
        bail!(giving_models::Error::BackendNotCompiled {
            backend: device.backend(),
            feature: device.backend(),
        });
    }
    Ok(())
}
