//! [`GivingRenderer`]: the Learner's progress as giving events.

use burn_train::LearnerSummary;
use burn_train::metric::MetricDefinition;
use burn_train::renderer::{
    EvaluationName, EvaluationProgress, MetricState, MetricsRenderer, MetricsRendererEvaluation,
    MetricsRendererTraining, ProgressType, TrainingProgress,
};
use giving::vocab::{ProgressEvent, keys};
use giving::{Event, Giver, Value};

/// Steps between two `synced` marks by default: the rate's window (as `iterate`'s).
const DEFAULT_WINDOW: usize = 10;

/// burn-train's `MetricsRenderer` that gives the Learner's progress as the bundled loops give
/// theirs through [`iterate`](giving::iterate), and draws nothing: it replaces burn-train's
/// TUI (the giving dashboard draws instead).
///
/// Register it with `SupervisedTraining::renderer(GivingRenderer::new())`. For each epoch of a
/// split (`task` `"train"` or `"valid"`; `"test"` for an evaluation) it gives
/// `{epoch, epochs, split}` (`epoch` from 0, as in the vocabulary; the training split's also
/// `total_steps`, the epoch's items over its first batch's times the epochs, so a dashboard's
/// run gauge follows the logger's `global_step` to 100%) and the task's start
/// `{task, progress: (0, items)}`, then per
/// iteration `{task, split, epoch, step, batch, progress: (items done, items)}`: `step` counts
/// from 0 in each epoch, `batch` is the items of the iteration, and every `window`-th step
/// and the epoch's last carry `synced: true`. burn-train reads each iteration's outputs on
/// the renderer's thread before rendering it, so a step's time is after its device work: the
/// rate's windows are sound.
///
/// The metric states burn-train renders are not given again: the [`GivingLogger`](super::GivingLogger)
/// gives them, with their epoch and iteration.
pub struct GivingRenderer {
    giver: Giver,
    window: usize,
    /// Per task: (epoch, items done at the last step, steps since the last `synced`).
    train: TaskState,
    valid: TaskState,
    test: TaskState,
}

#[derive(Default)]
struct TaskState {
    epoch: Option<usize>,
    items: usize,
    in_window: usize,
}

impl GivingRenderer {
    /// A renderer giving into the scopes the calling thread gives into now (burn-train calls it
    /// from a thread of its own).
    pub fn new() -> Self {
        Self::with_giver(Giver::current())
    }

    /// A renderer giving through `giver`.
    pub fn with_giver(giver: Giver) -> Self {
        Self {
            giver,
            window: DEFAULT_WINDOW,
            train: TaskState::default(),
            valid: TaskState::default(),
            test: TaskState::default(),
        }
    }

    /// Marks every `steps`-th step `synced` (default 10; at least 1).
    pub fn window(mut self, steps: usize) -> Self {
        self.window = steps.max(1);
        self
    }

    fn give_step(&mut self, task: &'static str, epoch: usize, epochs: usize, item: &Step) {
        if !self.giver.is_listening() {
            return;
        }
        let window = self.window;
        let state = match task {
            "train" => &mut self.train,
            "valid" => &mut self.valid,
            _ => &mut self.test,
        };
        let events = state.step(task, epoch, epochs, item, window);
        for event in events {
            self.giver.give(event);
        }
    }
}

impl Default for GivingRenderer {
    fn default() -> Self {
        Self::new()
    }
}

/// One iteration as burn-train reports it.
struct Step {
    iteration: usize,
    done: usize,
    total: usize,
}

impl TaskState {
    fn step(
        &mut self,
        task: &'static str,
        epoch: usize,
        epochs: usize,
        step: &Step,
        window: usize,
    ) -> Vec<Event> {
        let mut events = Vec::with_capacity(3);
        if self.epoch != Some(epoch) || step.iteration <= 1 {
            self.epoch = Some(epoch);
            self.items = 0;
            self.in_window = 0;
            let mut start = Event::builder()
                .field(keys::EPOCH, epoch)
                .field(keys::EPOCHS, epochs)
                .field(keys::SPLIT, task);
            // The run's steps, as a bundled loop gives them, so that a dashboard's run gauge and
            // ETA follow the training steps (the logger's `global_step`) and reach 100% at the
            // end: the epoch's items over the first batch's, times the epochs.
            if task == "train" && step.iteration <= 1 && step.done > 0 && step.total > 0 {
                let per_epoch = step.total.div_ceil(step.done);
                start = start.field(keys::TOTAL_STEPS, per_epoch * epochs);
            }
            events.push(start.build());
            // A `(0, n)` progress event starts the task's rate window, as `iterate`'s first does.
            events.push(ProgressEvent::event(task, 0, step.total as u64));
        }
        let batch = step.done.saturating_sub(self.items);
        self.items = step.done;
        self.in_window += 1;
        let last = step.total > 0 && step.done >= step.total;
        let synced = last || self.in_window >= window;
        if synced {
            self.in_window = 0;
        }
        let mut event = Event::builder()
            .field(keys::TASK, task)
            .field(keys::SPLIT, task)
            .field(keys::EPOCH, epoch)
            .field(keys::STEP, step.iteration.saturating_sub(1))
            .field(keys::BATCH, batch)
            .field(keys::PROGRESS, progress(step.done, step.total));
        if synced {
            event = event.field(keys::SYNCED, true);
        }
        events.push(event.build());
        events
    }
}

fn progress(done: usize, total: usize) -> Value {
    Value::List(vec![Value::from(done), Value::from(total)])
}

/// The step of a training or validation item: its iteration in the epoch, and the items of
/// the split's data loader done and in all.
fn training_step(item: &TrainingProgress) -> Step {
    let (done, total) = item
        .progress
        .as_ref()
        .map(|p| (p.items_processed, p.items_total))
        .unwrap_or((0, 0));
    Step {
        iteration: item.iteration.unwrap_or(done),
        done,
        total,
    }
}

impl MetricsRendererTraining for GivingRenderer {
    fn update_train(&mut self, _state: MetricState) {}

    fn update_valid(&mut self, _state: MetricState) {}

    fn render_train(&mut self, item: TrainingProgress, _indicators: Vec<ProgressType>) {
        let step = training_step(&item);
        let global = &item.global_progress;
        // burn-train counts epochs from 1, the vocabulary from 0.
        let epoch = global.items_processed.saturating_sub(1);
        self.give_step("train", epoch, global.items_total, &step);
    }

    fn render_valid(&mut self, item: TrainingProgress, _indicators: Vec<ProgressType>) {
        let step = training_step(&item);
        let global = &item.global_progress;
        let epoch = global.items_processed.saturating_sub(1);
        self.give_step("valid", epoch, global.items_total, &step);
    }

    /// Nothing is printed: the summary, when asked for, is for burn-train's own renderers.
    fn on_train_end(
        &mut self,
        _summary: Option<LearnerSummary>,
    ) -> Result<(), Box<dyn core::error::Error>> {
        Ok(())
    }
}

impl MetricsRendererEvaluation for GivingRenderer {
    fn update_test(&mut self, _name: EvaluationName, _state: MetricState) {}

    fn render_test(&mut self, item: EvaluationProgress, _indicators: Vec<ProgressType>) {
        let step = Step {
            iteration: item.iteration.unwrap_or(item.progress.items_processed),
            done: item.progress.items_processed,
            total: item.progress.items_total,
        };
        self.give_step("test", 0, 1, &step);
    }

    fn on_test_end(
        &mut self,
        _summary: Option<LearnerSummary>,
    ) -> Result<(), Box<dyn core::error::Error>> {
        Ok(())
    }
}

impl MetricsRenderer for GivingRenderer {
    fn manual_close(&mut self) {}

    fn register_metric(&mut self, _definition: MetricDefinition) {}
}
