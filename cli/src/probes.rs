//! Probes on the command line: `giving probes` lists what can be probed, `giving train
//! --probe SELECTOR` observes it while a model trains, without recompiling anything.

use anyhow::{Context, Result};
use clap::Args;
use giving::prelude::*;
use giving::vocab::keys;
use giving::{Event, Value};
use giving_instruments::{Overseer, Probes};
use giving_models::ModelKind;

use crate::out::say;

/// `giving probes`: the functions of this program instrumented with `#[probe]`.
#[derive(Debug, Args)]
pub(crate) struct ProbesArgs {
    /// Only the functions whose absolute name contains this text.
    filter: Option<String>,
}

/// `--probe`, for `giving train`.
#[derive(Debug, Args)]
pub(crate) struct ProbeArgs {
    /// Observe variables of the instrumented functions (repeatable): a ptera selector such as
    /// "fit > loss", "forward > x" or "fit(epoch) > #endloop_batch as step". Probed values are
    /// printed and given to the other instruments (`--log`, rate). `giving probes` lists what
    /// can be probed.
    #[arg(long = "probe", value_name = "SELECTOR")]
    pub(crate) probes: Vec<String>,
}

impl ProbeArgs {
    /// The `Probes` instrument for the selectors, checked before training starts (a bad
    /// selector names its column and what was expected there).
    pub(crate) fn instrument(&self) -> Result<Option<Probes>> {
        if self.probes.is_empty() {
            return Ok(None);
        }
        for selector in &self.probes {
            giving::probe::check(selector).with_context(|| format!("--probe {selector:?}"))?;
        }
        Ok(Some(Probes::new(&self.probes)?))
    }
}

/// Adds a printer of the probes' events to `overseer`: one line per event.
pub(crate) fn print_probed(overseer: Overseer, model: ModelKind) -> Overseer {
    overseer.instrument_fn("probe-lines", move |start| {
        let lines = start
            .given()
            .stream()
            .paced(giving_instruments::SINK_PACE)
            .where_([keys::PROBE])
            .for_each(move |event| say!("[{model}] {}", probe_line(&event)));
        start.spawn(lines);
        Ok(())
    })
}

/// `probe fit > loss: loss=0.1234`: the selector, then the fields (lazy values read here, on
/// the printer's thread; long lists shortened).
fn probe_line(event: &Event) -> String {
    let selector = event
        .get(keys::PROBE)
        .and_then(Value::as_str)
        .unwrap_or_default();
    let fields: Vec<String> = event
        .iter()
        .filter(|(key, _)| *key != keys::PROBE)
        .map(|(key, value)| format!("{key}={}", short(value)))
        .collect();
    format!("probe {selector}: {}", fields.join(" "))
}

/// A value for one line: a tensor's elements read, at most four of them shown.
fn short(value: &Value) -> String {
    const SHOWN: usize = 4;
    match value.resolved() {
        Ok(Value::List(items)) if items.len() > SHOWN => {
            let head: Vec<String> = items[..SHOWN].iter().map(short).collect();
            format!("[{}, … ({} values)]", head.join(", "), items.len())
        }
        Ok(Value::F64(x)) => format!("{x:.6}"),
        Ok(other) => other.to_string(),
        Err(error) => format!("<unreadable: {error}>"),
    }
}

/// `giving probes`: one block per instrumented function.
pub(crate) fn list(args: ProbesArgs) -> Result<()> {
    let sites = giving::probe::sites();
    let shown: Vec<_> = sites
        .iter()
        .filter(|site| {
            args.filter
                .as_deref()
                .is_none_or(|f| site.qualified_name().contains(f))
        })
        .collect();
    if shown.is_empty() {
        match &args.filter {
            Some(filter) => say!("no instrumented function matches `{filter}`"),
            None => say!("no function of this program is instrumented with #[probe]"),
        }
        return Ok(());
    }
    for site in shown {
        let (file, line) = site.location();
        say!(
            "{}{}  ({file}:{line})",
            site.qualified_name(),
            if site.is_async() { " (async)" } else { "" }
        );
        say!("  arguments: {}", join(site.arguments().iter().copied()));
        say!("  variables: {}", join(site.variables()));
        say!("  specials:  {}", join(site.specials()));
        if !site.overridable().is_empty() {
            say!(
                "  overridable: {}",
                join(site.overridable().iter().copied())
            );
        }
    }
    Ok(())
}

fn join<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    if names.is_empty() {
        "-".to_owned()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_lines_name_the_selector_and_shorten_long_values() {
        let event = Event::builder()
            .field(
                "x",
                Value::List((0..10).map(|i| Value::F64(f64::from(i))).collect()),
            )
            .field("loss", 0.25)
            .field(keys::PROBE, "forward > x")
            .build();
        assert_eq!(
            probe_line(&event),
            "probe forward > x: x=[0.000000, 1.000000, 2.000000, 3.000000, … (10 values)] loss=0.250000"
        );
    }
}
