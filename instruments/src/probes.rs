//! [`Probes`]: gives the events of probes into the run's scope, as voir's
//! `ov.probe(selector).give()`, so that every instrument and sink sees them.

use std::sync::Arc;

use futures::StreamExt;
use giving::probe::Selector;
use giving::vocab::keys;
use giving::{Event, ProbeError};

use crate::error::InstrumentError;
use crate::overseer::{Instrument, Start};

/// Opens probes on the functions the training loop runs (see `giving::probe`) and gives their
/// events into the run's scope, each with a `probe` field naming its selector
/// ([`keys::PROBE`]): the rate instrument, the log, the dashboard read them like any other
/// event. A loop with no `give!` and no `iterate` can so be measured from outside.
///
/// The events are given from a [derivation](giving::Given::derive): add `Probes` before the
/// instruments that read them (a rate), so that they see its last events too. The probes end
/// when training returns.
///
/// ```
/// use giving::prelude::*;
/// use giving_instruments::{Overseer, Probes};
/// use std::sync::{Arc, Mutex};
///
/// #[giving::probe]
/// fn fit(steps: u32) -> f64 {
///     let mut loss = 1.0;
///     for _ in 0..steps {
///         loss *= 0.5;
///     }
///     loss
/// }
///
/// let losses = Arc::new(Mutex::new(Vec::new()));
/// let sink = losses.clone();
/// let run = Overseer::new()
///     .with(Probes::new(["fit > loss"]).unwrap())
///     .instrument_fn("sink", move |start| {
///         let sink = sink.clone();
///         let losses = start.given().stream().key::<f64>("loss");
///         start.spawn(losses.for_each(move |l| sink.lock().unwrap().push(l)));
///         Ok(())
///     })
///     .run(|| fit(2));
/// assert!(run.problems.is_empty());
/// assert_eq!(*losses.lock().unwrap(), vec![1.0, 0.5, 0.25]);
/// ```
#[derive(Debug, Clone)]
pub struct Probes {
    selectors: Vec<Selector>,
}

impl Probes {
    /// Probes for `selectors`, checked now (syntax, functions, variables), so a bad one is
    /// refused before training starts.
    pub fn new<I, S>(selectors: I) -> Result<Self, ProbeError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let selectors = selectors
            .into_iter()
            .map(|s| giving::probe::check(s.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { selectors })
    }

    /// The selectors.
    pub fn selectors(&self) -> &[Selector] {
        &self.selectors
    }
}

impl Instrument for Probes {
    fn name(&self) -> &str {
        "probes"
    }

    fn start(&mut self, start: &mut Start<'_>) -> Result<(), InstrumentError> {
        let mut streams = Vec::with_capacity(self.selectors.len());
        for selector in &self.selectors {
            let probe = start.given().probe(selector.as_str())?;
            let name: Arc<str> = Arc::from(selector.as_str());
            streams.push(probe.map(move |event: Event| event.with(keys::PROBE, name.clone())));
        }
        let events = futures::stream::select_all(streams);
        start.derive(|input, giver| {
            // The derivation reads the probes, not the scope.
            drop(input);
            events.for_each(move |event| {
                giver.give(event);
                std::future::ready(())
            })
        });
        Ok(())
    }
}
