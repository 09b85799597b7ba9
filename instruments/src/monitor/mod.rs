//! Periodic device monitors: [`GpuMonitor`] (NVML) and [`CpuMonitor`] (sysinfo), both built on
//! a [`Sampler`] polled by [`poll`].

mod cpu;
mod gpu;

use std::sync::Arc;
use std::time::Duration;

use giving::{Event, Given, Pipeline};

use crate::overseer::{BoxError, Start};

pub use cpu::CpuMonitor;
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
    pipeline: Option<Pipeline<()>>,
    shutdown: Arc<tokio::sync::Notify>,
}

impl MonitorHandle {
    /// Hands the running monitor to the Overseer: stopped when training returns, its
    /// pipeline reported under the instrument's name.
    pub(crate) fn hand_over(self, start: &mut Start<'_>) {
        start.on_close(self.stopper());
        if let Some(pipeline) = self.into_pipeline() {
            start.track(pipeline);
        }
    }

    /// A handle for a monitor that does not run (its device is absent).
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
    pub(crate) fn stopper(&self) -> impl FnOnce() + Send + 'static {
        let shutdown = self.shutdown.clone();
        move || shutdown.notify_one()
    }

    /// The pipeline, to track or await.
    pub fn into_pipeline(self) -> Option<Pipeline<()>> {
        self.pipeline
    }
}

/// Gives a sample of `sampler` into `gv` every `interval` (the first one at once), until the
/// scope ends or [`MonitorHandle::stop`]. A failing sample is reported once on stderr and
/// the monitor stops.
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
                return;
            }
            let Some(mut s) = sampler.take() else { return };
            let outcome = tokio::task::spawn_blocking(move || {
                let sample = s.sample();
                (s, sample)
            })
            .await;
            match outcome {
                Ok((s, Ok(event))) => {
                    giver.give(event);
                    sampler = Some(s);
                }
                Ok((_, Err(error))) => {
                    eprintln!("giving: {name} monitor stopped: {error}");
                    return;
                }
                Err(error) => {
                    eprintln!("giving: {name} monitor stopped: its sampler panicked: {error}");
                    return;
                }
            }
        }
    });
    MonitorHandle {
        pipeline: Some(pipeline),
        shutdown,
    }
}

pub(crate) fn seconds(secs: f64) -> Result<Duration, BoxError> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            format!("poll interval must be a positive number of seconds, got {secs}").into()
        })
}
