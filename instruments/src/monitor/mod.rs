//! Periodic device monitors: [`GpuMonitor`] (NVML) and [`CpuMonitor`] (sysinfo), both built on
//! a [`Sampler`] polled by [`poll`].

#[cfg(feature = "cpu")]
mod cpu;
#[cfg(feature = "gpu")]
mod gpu;

use std::sync::Arc;
use std::time::Duration;

use giving::vocab::keys;
use giving::{Event, Given, Pipeline};

use crate::error::{BoxError, InstrumentError};
use crate::overseer::Start;

#[cfg(feature = "cpu")]
pub use cpu::CpuMonitor;
#[cfg(feature = "gpu")]
pub use gpu::GpuMonitor;

/// Reads one sample of something (a device, the process) as an event; a monitor calls it every
/// interval on a blocking thread, so it may take milliseconds.
///
/// ```
/// use giving::{event, Event};
/// use giving_instruments::{BoxError, Sampler};
///
/// struct Fans;
///
/// impl Sampler for Fans {
///     fn sample(&mut self) -> Result<Event, BoxError> {
///         Ok(event!(fan_rpm = 1200))
///     }
/// }
/// ```
pub trait Sampler: Send + 'static {
    /// One sample.
    fn sample(&mut self) -> Result<Event, BoxError>;
}

/// A running monitor; see [`poll`].
#[derive(Debug)]
pub struct MonitorHandle {
    pipeline: Option<Pipeline<Result<(), InstrumentError>>>,
    shutdown: Arc<tokio::sync::Notify>,
}

impl MonitorHandle {
    /// Hands the running monitor to the Overseer: stopped when training returns, its
    /// pipeline reported under the instrument's name.
    #[cfg_attr(not(any(feature = "gpu", feature = "cpu")), allow(dead_code))]
    pub(crate) fn hand_over(self, start: &mut Start<'_>) {
        start.on_close(self.stopper());
        if let Some(pipeline) = self.into_pipeline() {
            start.track(pipeline);
        }
    }

    /// A handle for a monitor that does not run (its device is absent).
    #[cfg_attr(not(any(feature = "gpu", feature = "cpu")), allow(dead_code))]
    pub(crate) fn inert() -> Self {
        Self {
            pipeline: None,
            shutdown: Arc::default(),
        }
    }

    /// Stops polling now (otherwise the monitor stops at its first tick after the scope ends).
    pub fn stop(&self) {
        self.shutdown.notify_one();
    }

    /// Whether the monitor runs (false where its device is absent).
    pub fn is_running(&self) -> bool {
        self.pipeline.is_some()
    }

    /// A function that stops the monitor, for [`Start::on_close`](crate::Start::on_close).
    #[cfg_attr(not(any(feature = "gpu", feature = "cpu")), allow(dead_code))]
    pub(crate) fn stopper(&self) -> impl FnOnce() + Send + 'static {
        let shutdown = self.shutdown.clone();
        move || shutdown.notify_one()
    }

    /// The pipeline, to track or await: it ends with the sampler's error if the sampler
    /// failed.
    pub fn into_pipeline(self) -> Option<Pipeline<Result<(), InstrumentError>>> {
        self.pipeline
    }
}

/// Gives a sample of `sampler` into `gv` every `interval` (the first one at once), until the
/// scope ends or [`MonitorHandle::stop`]. A failing sampler stops the monitor: it gives
/// `{problem, instrument}` into the scope at once (the dashboard and the log show it) and its
/// pipeline ends with [`InstrumentError::Sampler`] (the Overseer reports it as a problem).
///
/// The monitor learns that the scope ended at its next tick; the
/// [`Overseer`](crate::Overseer) stops it at once.
pub fn poll(gv: &Given, name: &str, interval: Duration, sampler: impl Sampler) -> MonitorHandle {
    let giver = gv.giver();
    // Checked at each tick: a subscription would cost the training thread a push per event.
    let scope = gv.handle();
    let shutdown = Arc::new(tokio::sync::Notify::new());
    let stop = shutdown.clone();
    let name = name.to_owned();
    let interval = interval.max(Duration::from_millis(1));
    let pipeline = gv.spawn(async move {
        let mut sampler = Some(sampler);
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                () = stop.notified() => break,
                _ = ticks.tick() => {}
            }
            if scope.is_finished() {
                break;
            }
            let Some(mut s) = sampler.take() else { break };
            let outcome = tokio::task::spawn_blocking(move || {
                let sample = s.sample();
                (s, sample)
            })
            .await;
            let source: BoxError = match outcome {
                Ok((s, Ok(event))) => {
                    giver.give(event);
                    sampler = Some(s);
                    continue;
                }
                Ok((_, Err(error))) => error,
                Err(error) => format!("its sampler panicked: {error}").into(),
            };
            let error = InstrumentError::Sampler {
                monitor: name.clone(),
                source,
            };
            giver.give(
                Event::builder()
                    .field(keys::PROBLEM, error.to_string())
                    .field(keys::INSTRUMENT, format!("{name} monitor"))
                    .build(),
            );
            return Err(error);
        }
        Ok(())
    });
    MonitorHandle {
        pipeline: Some(pipeline),
        shutdown,
    }
}

#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) fn seconds(secs: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            format!("must be a positive number of seconds (the poll interval), not {secs}")
        })
}
