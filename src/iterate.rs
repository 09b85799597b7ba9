//! [`iterate`]: the counterpart of `voir.iterate`, wrapping a training loop's batches.

use std::sync::Arc;

use crate::event::{Fields, Origin};
use crate::give::{fields, give_with};
use crate::vocab::keys;
use crate::{Key, StopToken, Value, routing};

static ORIGIN: Origin = Origin {
    file: file!(),
    line: line!(),
    module: module_path!(),
};

/// Wraps the batch loop of a training task so that it reports its progress and steps and can
/// be stopped from outside, without the loop knowing who listens.
///
/// Around the items of `iterable` it gives, when anyone listens:
/// - before the first item: `{task, progress: (0, n)}` (when the length `n` is known);
/// - after each step (when the loop asks for the next item, or ends):
///   `{task, step, batch, progress: (i, n)}`, with `batch` the step's batch size when known;
/// - every [`window`](Iterate::window) steps, and after the last one, it first calls the
///   [`sync`](Iterate::sync) hook (a device sync) once and marks that step event `synced: true`.
///
/// Rates are computed from the timestamps of the synced step events and the batch sizes in
/// between: the host never waits for the device on the other steps, as in milabench.
///
/// The iteration ends early, between two steps, once a stop is asked through any scope the
/// loop runs in ([`Given::stop_token`](crate::Given::stop_token)) or through the token given
/// to [`stop_on`](Iterate::stop_on).
///
/// ```
/// use giving::prelude::*;
/// use giving::{given, iterate};
///
/// let gv = given();
/// let steps = gv.stream().where_(["step"]).format("{step}:{batch}:{synced}");
/// let steps = gv.spawn(steps.unwrap().collect::<Vec<_>>());
/// let batches = vec![vec![1, 2], vec![3, 4], vec![5]];
/// let mut syncs = 0;
/// for batch in iterate("train", batches).batch_size_with(|b: &Vec<i32>| b.len()).window(2).sync(|| syncs += 1) {
///     let _ = batch; // forward, backward, step
/// }
/// gv.finish().unwrap();
/// assert_eq!(syncs, 2);
/// // `synced` is present on window ends only: the other events lack the key and are skipped.
/// assert_eq!(steps.join().unwrap(), vec!["1:2:true", "2:1:true"]);
/// ```
pub fn iterate<'a, I: IntoIterator>(task: &str, iterable: I) -> Iterate<'a, I::IntoIter> {
    let inner = iterable.into_iter();
    let total = match inner.size_hint() {
        (low, Some(high)) if low == high => Some(high),
        _ => None,
    };
    Iterate {
        inner,
        task: Value::Str(Arc::from(task)),
        total,
        batch_size: BatchSize::Unknown,
        sync: None,
        window: 10,
        stop: None,
        started: false,
        finished: false,
        completed: 0,
        in_window: 0,
        pending: None,
    }
}

enum BatchSize<'a, T> {
    Unknown,
    Fixed(usize),
    With(Box<dyn FnMut(&T) -> usize + 'a>),
}

/// Iterator of [`iterate`]; configure it with its builder methods before looping.
#[must_use = "iterators do nothing unless iterated"]
pub struct Iterate<'a, I: Iterator> {
    inner: I,
    task: Value,
    total: Option<usize>,
    batch_size: BatchSize<'a, I::Item>,
    sync: Option<Box<dyn FnMut() + 'a>>,
    window: usize,
    stop: Option<StopToken>,
    started: bool,
    finished: bool,
    /// Steps ended so far.
    completed: usize,
    /// Steps ended since the last sync.
    in_window: usize,
    /// The step in progress (an item was handed out), with its batch size if known.
    pending: Option<Option<usize>>,
}

impl<'a, I: Iterator> Iterate<'a, I> {
    /// Every step processes `size` items (reported as `batch`).
    pub fn batch_size(mut self, size: usize) -> Self {
        self.batch_size = BatchSize::Fixed(size);
        self
    }

    /// The number of items of each step, read from the step's item (e.g. a batch's first
    /// dimension).
    pub fn batch_size_with(mut self, size: impl FnMut(&I::Item) -> usize + 'a) -> Self {
        self.batch_size = BatchSize::With(Box::new(size));
        self
    }

    /// The device sync to call once per window (for burn: `B::sync(&device)`), never per step.
    pub fn sync(mut self, sync: impl FnMut() + 'a) -> Self {
        self.sync = Some(Box::new(sync));
        self
    }

    /// Steps per window: how often the sync hook runs (default 10; 0 is taken as 1).
    pub fn window(mut self, steps: usize) -> Self {
        self.window = steps.max(1);
        self
    }

    /// The number of steps, when the iterator cannot tell it exactly.
    pub fn total(mut self, steps: usize) -> Self {
        self.total = Some(steps);
        self
    }

    /// Also stop when this token is stopped (besides the stop tokens of the scopes).
    pub fn stop_on(mut self, token: StopToken) -> Self {
        self.stop = Some(token);
        self
    }

    fn stop_requested(&self) -> bool {
        self.stop.as_ref().is_some_and(StopToken::is_stopped) || routing::stop_requested()
    }

    fn progress(&self, done: usize) -> Option<Value> {
        self.total
            .map(|total| Value::List(vec![Value::from(done), Value::from(total)]))
    }

    fn end_step(&mut self, batch: Option<usize>, last: bool) {
        let step = self.completed;
        self.completed += 1;
        self.in_window += 1;
        // While a panic unwinds through the loop, the device sync is not called: it may panic
        // too (the device is what failed), and a second panic aborts the process before any
        // sink is flushed. The step is still given, unsynced.
        let unwinding = std::thread::panicking();
        let synced = !unwinding && (last || self.in_window >= self.window);
        if synced {
            if let Some(sync) = &mut self.sync {
                sync();
            }
            self.in_window = 0;
        }
        // Built only when someone listens.
        give_with(&ORIGIN, || {
            let mut fields = Fields::new();
            fields.push((Key::from_static(keys::TASK), self.task.clone()));
            fields.push((Key::from_static(keys::STEP), Value::from(step)));
            if let Some(batch) = batch {
                fields.push((Key::from_static(keys::BATCH), Value::from(batch)));
            }
            if let Some(progress) = self.progress(self.completed) {
                fields.push((Key::from_static(keys::PROGRESS), progress));
            }
            if synced {
                fields.push((Key::from_static(keys::SYNCED), Value::Bool(true)));
            }
            fields
        });
    }
}

impl<I: Iterator> Iterator for Iterate<'_, I> {
    type Item = I::Item;

    fn next(&mut self) -> Option<I::Item> {
        if self.finished {
            return None;
        }
        if !self.started {
            self.started = true;
            if self.total.is_some() {
                give_with(&ORIGIN, || {
                    let progress = self.progress(0).unwrap_or_default();
                    fields([(keys::TASK, self.task.clone()), (keys::PROGRESS, progress)])
                });
            }
        }
        // The next item is fetched before the previous step is closed, so that the last step
        // of the loop is known to be last and its window gets synced.
        let item = if self.stop_requested() {
            None
        } else {
            self.inner.next()
        };
        if let Some(batch) = self.pending.take() {
            self.end_step(batch, item.is_none());
        }
        let Some(item) = item else {
            self.finished = true;
            return None;
        };
        let batch = match &mut self.batch_size {
            BatchSize::Unknown => None,
            BatchSize::Fixed(size) => Some(*size),
            BatchSize::With(size) => Some(size(&item)),
        };
        self.pending = Some(batch);
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.finished {
            (0, Some(0))
        } else {
            self.inner.size_hint()
        }
    }
}

impl<I: Iterator> Drop for Iterate<'_, I> {
    /// A loop that breaks out early still reports (and syncs) the step it was in.
    fn drop(&mut self) {
        if let Some(batch) = self.pending.take() {
            self.end_step(batch, true);
        }
    }
}
