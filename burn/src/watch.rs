//! [`ModelWatch`]: per-parameter statistics of a burn model (weights, gradients, the
//! optimiser's update), computed on the device and given as lazy values every N steps.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use burn::module::{AutodiffModule, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::prelude::Backend;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{IndexingUpdateOp, Tensor};
use giving::probe::ProbeError;
use giving::vocab::keys;
use giving::{Event, FromValue, Giver, Resolve, ResolveError, Value};

use crate::activations::Activations;
use crate::lazy::flat_on_device;

mod host;
use host::HostValues;

/// Histogram bins by default (TensorBoard's and wandb's default is 64 too).
pub const DEFAULT_BINS: usize = 64;

/// The statistics packed before the histogram, in this order.
const STATS: [&str; 8] = [
    keys::NORM,
    keys::MEAN,
    keys::STD,
    keys::MIN,
    keys::MAX,
    keys::ZEROS,
    keys::NANS,
    keys::INFS,
];

/// Watches a model's parameters, as `wandb.watch(model, log="all", log_freq=N)` does: every
/// `every` steps, for each parameter named by its path in the module (`fc1.weight`), it gives
/// `{global_step, param, watch: "weight" | "grad", norm, mean, std, min, max, zeros, nans,
/// infs, hist}` and, the step after, `{global_step, param, watch: "update", update_ratio}`
/// (‖Δw‖/‖w‖ of the optimiser's step).
///
/// The statistics are given as lazy values: the training thread never waits for them, and
/// the consumer that reads one statistic gets the whole watched step's at once. The first
/// reader computes them in two passes over the values on its own thread: on burn's CPU
/// backends the training thread only keeps a handle to each tensor; on a GPU it queues one
/// concatenation of the step's tensors, read with one transfer ([`StatsOn`]; computing them
/// on the device instead is [`stats_on`](Self::stats_on)`(StatsOn::Device)`). `min`, `max`
/// and the histogram count the finite elements (the histogram has [`bins`](Self::bins) equal
/// bins from `min` to `max`); `norm`, `mean` and `std` are NaN when an element is. Between
/// watched steps [`observe`](Self::observe) returns after one comparison.
///
/// ```
/// use burn::backend::{Autodiff, Flex};
/// use burn::module::Module;
/// use burn::nn::{Linear, LinearConfig};
/// use burn::optim::{GradientsParams, Optimizer, SgdConfig};
/// use burn::tensor::Tensor;
/// use giving::prelude::*;
/// use giving::given;
/// use giving_burn::ModelWatch;
///
/// type B = Autodiff<Flex>;
/// let device = Default::default();
/// let mut model: Linear<B> = LinearConfig::new(3, 2).init(&device);
/// let mut optim = SgdConfig::new().init();
/// let gv = given();
/// let norms = gv.spawn(gv.stream().where_(["norm"]).count());
/// let mut watch = ModelWatch::new().every(2);
/// for step in 0..4u64 {
///     let loss = model.forward(Tensor::<B, 2>::ones([4, 3], &device)).mean();
///     let grads = GradientsParams::from_grads(loss.backward(), &model);
///     watch.observe(step, &model, &grads); // steps 0 and 2: weights and gradients
///     model = optim.step(0.1, model, grads);
/// }
/// gv.finish().unwrap();
/// // 2 watched steps × 2 parameters (weight, bias) × (weight, grad).
/// assert_eq!(norms.join().unwrap(), 8);
/// ```
///
/// `B` is the backend the values are read on: an autodiff backend's inner one, inferred from
/// the first [`observe`](Self::observe).
pub struct ModelWatch<B: Backend> {
    every: u64,
    bins: usize,
    /// Where the statistics are computed (see [`StatsOn`]).
    on: StatsOn,
    /// Whether the host path reads a watched step's tensors with one transfer (a GPU backend,
    /// where a read waits for the device's queue) or each in place (a CPU backend, where
    /// reading is free and a concatenation would be a copy); `None` until the first watched
    /// step tells the backend.
    gather: Option<bool>,
    giver: Giver,
    /// The parameters of the last watched step, to measure the optimiser's step at the next
    /// call.
    before: Option<(u64, Vec<Watched<B>>)>,
    /// The probed variables watched as activations.
    activations: Activations,
}

impl<B: Backend> ModelWatch<B> {
    /// A watch of every 100th step, giving into the scopes the calling thread gives into.
    pub fn new() -> Self {
        Self {
            every: 100,
            bins: DEFAULT_BINS,
            // The default everywhere: queuing the device statistics held the training thread
            // 30 ms per watched step on flex, 170–220 ms on wgpu (`cargo run --release -p
            // giving-models --features wgpu --example watch_cost`) and about 40 ms on an H100
            // (docs/watch.md); the host path holds it 50–75 µs.
            on: StatsOn::Host,
            gather: None,
            giver: Giver::current(),
            before: None,
            activations: Activations::new(),
        }
    }

    /// Watches every `steps`-th step (from step 0; at least 1).
    pub fn every(mut self, steps: u64) -> Self {
        self.every = steps.max(1);
        self
    }

    /// Histogram bins (at least 1; default [`DEFAULT_BINS`]).
    pub fn bins(mut self, bins: usize) -> Self {
        self.bins = bins.max(1);
        self
    }

    /// Computes the statistics on the device or on the host (default: the host, see
    /// [`StatsOn`]).
    pub fn stats_on(mut self, on: StatsOn) -> Self {
        self.on = on;
        self
    }

    /// Also watches the activations that `selector` probes: a variable of a function annotated
    /// with `#[giving::probe]`, as `"Cnn.forward > x"` (ptera's selectors, docs/probes.md), so
    /// that a layer's output is watched without editing the model. On each watched step it
    /// gives `{global_step, param: selector, watch: "act", norm, …, hist}`, the weights'
    /// statistics, computed where [`stats_on`](Self::stats_on) says: on the host, by the
    /// reader from the tensor's values; on the device, from the tensor where it is (only the
    /// statistics are read). Between watched steps no probe is open: the instrumented function
    /// runs as unobserved.
    ///
    /// Call on the training thread, where the model runs (the probes observe that thread),
    /// after `giving_burn::probe_autodiff_tensors::<B>()` (the bundled models' training does
    /// it): without it a probed tensor is given as its type's name, which has no statistics.
    /// A malformed selector, or one naming no instrumented function, is refused here.
    ///
    /// ```
    /// use burn::backend::{Autodiff, Flex};
    /// use burn::module::Module;
    /// use burn::nn::{Linear, LinearConfig};
    /// use burn::optim::{GradientsParams, Optimizer, SgdConfig};
    /// use burn::tensor::Tensor;
    /// use giving::prelude::*;
    /// use giving::given;
    /// use giving_burn::ModelWatch;
    ///
    /// type B = Autodiff<Flex>;
    ///
    /// #[derive(Module, Debug)]
    /// struct Net<B: burn::prelude::Backend> {
    ///     fc: Linear<B>,
    /// }
    ///
    /// #[giving::probe]
    /// impl<B: burn::prelude::Backend> Net<B> {
    ///     fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
    ///         let hidden = self.fc.forward(x);
    ///         hidden.clamp_min(0.0)
    ///     }
    /// }
    ///
    /// giving_burn::probe_autodiff_tensors::<B>();
    /// let device = Default::default();
    /// let mut model = Net::<B> { fc: LinearConfig::new(3, 2).init(&device) };
    /// let mut optim = SgdConfig::new().init();
    /// let gv = given();
    /// let acts = gv.spawn(
    ///     gv.stream().where_eq("watch", "act").map(|e| (e.get_as::<u64>("global_step").unwrap(), e.get_as::<f64>("max").unwrap())).collect::<Vec<_>>(),
    /// );
    /// let mut watch = ModelWatch::new().every(2).activations("Net.forward > hidden").unwrap();
    /// for step in 0..4u64 {
    ///     let loss = model.forward(Tensor::<B, 2>::ones([4, 3], &device)).mean();
    ///     let grads = GradientsParams::from_grads(loss.backward(), &model);
    ///     watch.observe(step, &model, &grads);
    ///     model = optim.step(0.1, model, grads);
    /// }
    /// gv.finish().unwrap();
    /// let acts = acts.join().unwrap();
    /// assert_eq!(acts.iter().map(|(step, _)| *step).collect::<Vec<_>>(), [0, 2]);
    /// ```
    pub fn activations(mut self, selector: &str) -> Result<Self, ProbeError> {
        self.activations.add(selector)?;
        // Step 0 is watched: its forward is caught from now on.
        self.activations.arm()?;
        Ok(self)
    }

    /// Gives through `giver` instead of the calling thread's scopes.
    pub fn with_giver(mut self, giver: Giver) -> Self {
        self.giver = giver;
        self
    }

    /// Whether `step` is watched.
    pub fn is_watched(&self, step: u64) -> bool {
        step.is_multiple_of(self.every)
    }

    /// Call once per step, after `backward` and before the optimiser's step, with the step's
    /// gradients: on a watched step it gives every parameter's weight and gradient
    /// statistics; on the step after one, the update ratio of the step between.
    pub fn observe<A, M>(&mut self, global_step: u64, model: &M, grads: &GradientsParams)
    where
        A: AutodiffBackend<InnerBackend = B>,
        M: AutodiffModule<A>,
    {
        let watched = self.is_watched(global_step);
        if !self.activations.is_empty() {
            self.observe_activations::<A>(global_step, watched);
        }
        if (!watched && self.before.is_none()) || !self.giver.is_listening() {
            self.before = None;
            return;
        }
        let mut visitor = Visitor::<A> {
            grads: watched.then_some(grads),
            path: Vec::new(),
            params: Vec::new(),
        };
        model.visit(&mut visitor);
        let Some(first) = visitor.params.first() else {
            return;
        };
        // Decided once, by the backend.
        let gather = *self
            .gather
            .get_or_insert_with(|| !is_cpu_backend(&B::name(&first.weights.device())));
        let reading = match self.on {
            StatsOn::Device => Reading::Device,
            StatsOn::Host if gather => Reading::HostGathered,
            StatsOn::Host => Reading::HostInPlace,
        };
        if let Some((step, before)) = self.before.take() {
            self.give_updates(reading, step, &before, &visitor.params);
        }
        if !watched {
            return;
        }
        // Every parameter's statistics, in the module's order: weights, then the gradient.
        let mut watched_tensors = Vec::with_capacity(2 * visitor.params.len());
        for param in &mut visitor.params {
            watched_tensors.push((param.name.as_str(), "weight", param.weights.clone()));
            // On the device the gradient is not kept for the next step: its memory goes back
            // once its statistics are queued (on the host, once they are read).
            if let Some(grad) = param.grad.take() {
                watched_tensors.push((param.name.as_str(), "grad", grad));
            }
        }
        self.give_stats(reading, global_step, watched_tensors);
        self.before = Some((global_step, visitor.params));
    }

    /// Gives the activations caught during this step's forward if it is watched, and opens
    /// the probes for the next step if that one is.
    fn observe_activations<A: AutodiffBackend<InnerBackend = B>>(
        &mut self,
        global_step: u64,
        watched: bool,
    ) {
        let listening = self.giver.is_listening();
        for captured in self.activations.take() {
            if watched && listening {
                let on_device = match self.on {
                    StatsOn::Device => device_stats::<B>(&captured.value, self.bins),
                    StatsOn::Host => None,
                };
                let work = match on_device {
                    Some(stats) => Work::Read(stats),
                    None => Work::Values(captured.value, self.bins),
                };
                let packed = Arc::new(Packed::new(work));
                self.give_packed(global_step, &captured.name, "act", &packed, 0);
            }
        }
        if listening && self.is_watched(global_step + 1) {
            crate::probe_autodiff_tensors::<A>();
            // The selectors were checked when added; one that no longer opens (its function
            // gone from the registry cannot happen in one program) is skipped.
            let _ = self.activations.arm();
        }
    }

    /// Gives the statistics of each `(param, what, values)`, read as `reading` says.
    fn give_stats(&self, reading: Reading, step: u64, tensors: Vec<(&str, &str, Tensor<B, 1>)>) {
        let (labels, tensors): (Vec<_>, Vec<_>) = tensors
            .into_iter()
            .map(|(name, what, tensor)| ((name, what), tensor))
            .unzip();
        if labels.is_empty() {
            return;
        }
        let bins = self.bins;
        let reads = match reading {
            Reading::Device => {
                let stats = tensors.into_iter().map(|t| stats(t, bins)).collect();
                Reads::shared(Work::Read(Tensor::cat(stats, 0)), STATS.len() + bins)
            }
            Reading::HostGathered => {
                let lengths = tensors.iter().map(|t| t.dims()[0]).collect();
                let work = Work::StatsOfParts(Tensor::cat(tensors, 0), lengths, bins);
                Reads::shared(work, STATS.len() + bins)
            }
            Reading::HostInPlace => Reads::Each(
                tensors
                    .into_iter()
                    .map(|t| Arc::new(Packed::new(Work::Stats(t, bins))))
                    .collect(),
            ),
        };
        for (index, (name, what)) in labels.into_iter().enumerate() {
            let (packed, offset) = reads.slot(index);
            self.give_packed(step, name, what, &packed, offset);
        }
    }

    /// Gives one parameter's (or activation's) statistics, each a lazy value reading
    /// `packed` from `offset` on ([`STATS`], then the histogram).
    fn give_packed(
        &self,
        step: u64,
        name: &str,
        what: &str,
        packed: &Arc<Packed<B>>,
        offset: usize,
    ) {
        let mut event = Event::builder()
            .field(keys::GLOBAL_STEP, step)
            .field(keys::PARAM, name)
            .field(keys::WATCH, what);
        for (index, key) in STATS.iter().enumerate() {
            event = event.field(*key, Value::lazy(Stat::One(packed.clone(), offset + index)));
        }
        let hist = offset + STATS.len()..offset + STATS.len() + self.bins;
        event = event.field(keys::HIST, Value::lazy(Stat::Range(packed.clone(), hist)));
        self.giver.give(event.build());
    }

    /// Gives each parameter's update ratio, read as `reading` says.
    fn give_updates(
        &self,
        reading: Reading,
        step: u64,
        before: &[Watched<B>],
        after: &[Watched<B>],
    ) {
        if before.is_empty() {
            return;
        }
        let pairs = || {
            before
                .iter()
                .zip(after)
                .map(|(b, a)| (&b.weights, &a.weights))
        };
        let reads = match reading {
            Reading::Device => {
                let ratios = pairs()
                    .map(|(old, new)| {
                        (new.clone() - old.clone()).powi_scalar(2).sum().sqrt()
                            / old.clone().powi_scalar(2).sum().sqrt()
                    })
                    .collect();
                Reads::shared(Work::Read(Tensor::cat(ratios, 0)), 1)
            }
            Reading::HostGathered => {
                let (old, new): (Vec<_>, Vec<_>) =
                    pairs().map(|(old, new)| (old.clone(), new.clone())).unzip();
                let lengths = old.iter().map(|t| t.dims()[0]).collect();
                let work = Work::RatiosOfParts(Tensor::cat(old, 0), Tensor::cat(new, 0), lengths);
                Reads::shared(work, 1)
            }
            Reading::HostInPlace => Reads::Each(
                pairs()
                    .map(|(old, new)| Arc::new(Packed::new(Work::Ratio(old.clone(), new.clone()))))
                    .collect(),
            ),
        };
        for (index, (old, _)) in before.iter().zip(after).enumerate() {
            let (packed, at) = reads.slot(index);
            self.give_update(step, &old.name, Stat::One(packed, at));
        }
    }

    /// Gives one parameter's update ratio.
    fn give_update(&self, step: u64, name: &str, ratio: Stat<B>) {
        self.giver.give(
            Event::builder()
                .field(keys::GLOBAL_STEP, step)
                .field(keys::PARAM, name)
                .field(keys::WATCH, "update")
                .field(keys::UPDATE_RATIO, Value::lazy(ratio))
                .build(),
        );
    }
}

impl<B: Backend> Default for ModelWatch<B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<B: Backend> fmt::Debug for ModelWatch<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelWatch")
            .field("every", &self.every)
            .field("bins", &self.bins)
            .finish()
    }
}

/// The statistics of `x` in one tensor, on its device: [`STATS`] then `bins` counts.
fn stats<B: Backend>(x: Tensor<B, 1>, bins: usize) -> Tensor<B, 1> {
    let n = x.dims()[0].max(1) as f64;
    let finite = x.clone().is_finite();
    let sum_sq = x.clone().powi_scalar(2).sum();
    let mean = x.clone().sum() / n;
    let variance = (x.clone() - mean.clone()).powi_scalar(2).sum() / n;
    // Non-finite elements are left out of the range: +inf for the min, -inf for the max.
    let min = x
        .clone()
        .mask_fill(finite.clone().bool_not(), f64::INFINITY)
        .min();
    let max = x
        .clone()
        .mask_fill(finite.clone().bool_not(), f64::NEG_INFINITY)
        .max();
    let zeros = x.clone().equal_elem(0.0).float().sum() / n;
    let nans = x.clone().is_nan().float().sum();
    let infs = x.clone().is_inf().float().sum();
    let hist = histogram(x, finite, min.clone(), max.clone(), bins);
    Tensor::cat(
        vec![
            sum_sq.sqrt(),
            mean,
            variance.sqrt(),
            min,
            max,
            zeros,
            nans,
            infs,
            hist,
        ],
        0,
    )
}

/// The statistics of a probed activation on its device ([`stats`] of its values, queued on
/// the calling thread: nothing is read there), when the probe gave it as a lazy tensor of this
/// backend; `None` for any other value, whose statistics are computed from its values on the
/// host.
fn device_stats<B: Backend>(value: &Value, bins: usize) -> Option<Tensor<B, 1>> {
    let Value::Lazy(lazy) = value else {
        return None;
    };
    flat_on_device::<B>(lazy.source()).map(|values| stats(values, bins))
}

/// Counts the finite elements of `x` in `bins` equal bins from `min` to `max`, on the device
/// (one scatter-add): no value leaves it.
fn histogram<B: Backend>(
    x: Tensor<B, 1>,
    finite: Tensor<B, 1, burn::tensor::Bool>,
    min: Tensor<B, 1>,
    max: Tensor<B, 1>,
    bins: usize,
) -> Tensor<B, 1> {
    let n = x.dims()[0];
    let device = x.device();
    let width = max - min.clone();
    // A single value (width 0) goes to the first bin; a range with no finite element (min
    // +inf) gives NaN positions, sent to bin 0 and counted with weight 0 below.
    let width = width.clone() + width.equal_elem(0.0).float();
    let position = (x.mask_where(finite.clone().bool_not(), min.clone().expand([n])) - min) / width
        * bins as f64;
    let position = position.clone().mask_fill(position.is_nan(), 0.0);
    let index = position.floor().clamp(0.0, (bins - 1) as f64).int();
    Tensor::<B, 1>::zeros([bins], &device).scatter(0, index, finite.float(), IndexingUpdateOp::Add)
}

/// A parameter as the watch reads it: its path, its values off the autodiff graph and its
/// gradient, flattened.
struct Watched<B: Backend> {
    name: String,
    weights: Tensor<B, 1>,
    grad: Option<Tensor<B, 1>>,
}

/// Collects the parameters of a module in visit order (the order of its fields: forward order
/// in the usual model), each with its path and, if `grads` are given, its gradient.
struct Visitor<'a, B: AutodiffBackend> {
    grads: Option<&'a GradientsParams>,
    path: Vec<String>,
    params: Vec<Watched<B::InnerBackend>>,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for Visitor<'_, B> {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.push(name.to_owned());
    }

    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.pop();
    }

    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let grad = self
            .grads
            .and_then(|grads| grads.get::<B::InnerBackend, D>(param.id))
            .map(|grad| grad.reshape([-1]));
        self.params.push(Watched {
            name: self.path.join("."),
            weights: param.val().inner().reshape([-1]),
            grad,
        });
    }
}

/// Where a [`ModelWatch`] computes its statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatsOn {
    /// On the device, in a few reductions and a scatter-add per tensor that the training
    /// thread queues; the reader transfers one small tensor per watched step (and one per
    /// watched activation, whose values never leave the device). Not the default:
    /// queuing those few hundred small operations held the training thread for a whole watched
    /// step's worth of device work (30 ms on flex, 170–220 ms on wgpu's software Vulkan, about
    /// 40 ms on an H100 for the bundled MLP).
    Device,
    /// On the host, by the first reader of a statistic, in two passes over the values; the
    /// default on every backend. On burn's CPU backends (flex, ndarray, cubecl's cpu) the
    /// training thread only keeps a handle to each tensor, read in place; on a GPU it queues
    /// one concatenation of the watched step's tensors, which the reader transfers at once.
    Host,
}

/// Whether `name` (`Backend::name`) is one of burn's CPU backends, where a tensor's values are
/// read in place.
fn is_cpu_backend(name: &str) -> bool {
    // cubecl's cpu runtime may be wrapped (`fusion<cubecl<cpu>>`).
    name == "flex" || name == "ndarray" || name.contains("cubecl<cpu>")
}

/// How a watched step's tensors are read: [`StatsOn`] and, on the host, the backend.
#[derive(Debug, Clone, Copy)]
enum Reading {
    /// Statistics computed on the device, packed into one tensor.
    Device,
    /// The tensors concatenated on the device, read with one transfer (a GPU backend).
    HostGathered,
    /// Each tensor read in place (a CPU backend).
    HostInPlace,
}

/// Where each of a watched step's tensors has its statistics: one packed vector shared by all,
/// the i-th's from `i × width`, or one vector each.
enum Reads<B: Backend> {
    Shared(Arc<Packed<B>>, usize),
    Each(Vec<Arc<Packed<B>>>),
}

impl<B: Backend> Reads<B> {
    fn shared(work: Work<B>, width: usize) -> Self {
        Reads::Shared(Arc::new(Packed::new(work)), width)
    }

    /// The vector of the `index`-th tensor, and where its statistics start in it.
    fn slot(&self, index: usize) -> (Arc<Packed<B>>, usize) {
        match self {
            Reads::Shared(packed, width) => (packed.clone(), index * width),
            Reads::Each(each) => (each[index].clone(), 0),
        }
    }
}

/// What a [`Packed`] reads: a tensor of statistics computed on the device, or the values to
/// compute them from on the host.
enum Work<B: Backend> {
    /// Statistics already packed on the device: read as they are.
    Read(Tensor<B, 1>),
    /// A parameter's values: their statistics and histogram of this many bins.
    Stats(Tensor<B, 1>, usize),
    /// A parameter before and after a step: ‖after − before‖ / ‖before‖.
    Ratio(Tensor<B, 1>, Tensor<B, 1>),
    /// A probed value (a lazy tensor, read by the first reader): its statistics and
    /// histogram of this many bins.
    Values(Value, usize),
    /// Several tensors' values concatenated (one transfer), with each one's length: their
    /// statistics one after the other.
    StatsOfParts(Tensor<B, 1>, Vec<usize>, usize),
    /// Several parameters before and after a step, concatenated, with each one's length:
    /// their update ratios.
    RatiosOfParts(Tensor<B, 1>, Tensor<B, 1>, Vec<usize>),
}

/// One packed vector of statistics, computed or read at most once (by the first statistic
/// read).
struct Packed<B: Backend> {
    /// Taken by the read: the tensors are moved into it, not cloned, so that a tensor nobody
    /// else holds (the concatenations made for the watch) is handed to the host without a
    /// copy where the backend can (flex: its buffer becomes the host data).
    work: Mutex<Option<Work<B>>>,
    read: OnceLock<Result<Vec<f64>, String>>,
}

impl<B: Backend> Packed<B> {
    fn new(work: Work<B>) -> Self {
        Self {
            work: Mutex::new(Some(work)),
            read: OnceLock::new(),
        }
    }

    fn values(&self) -> Result<&[f64], ResolveError> {
        self.read
            .get_or_init(|| {
                crate::lazy::count_resolution();
                let work = self
                    .work
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                match work.ok_or("model statistics: their computation panicked")? {
                    Work::Read(tensor) => Ok(HostValues::read(tensor)?.into_f64()),
                    Work::Stats(tensor, bins) => {
                        let length = tensor.dims()[0];
                        Ok(HostValues::read(tensor)?.stats_of_parts(&[length], bins))
                    }
                    Work::Ratio(before, after) => {
                        let length = before.dims()[0];
                        Ok(HostValues::read(before)?
                            .ratios_of_parts(&HostValues::read(after)?, &[length]))
                    }
                    Work::Values(value, bins) => Ok(host::stats(&numbers(&value)?, bins)),
                    Work::StatsOfParts(all, lengths, bins) => {
                        Ok(HostValues::read(all)?.stats_of_parts(&lengths, bins))
                    }
                    Work::RatiosOfParts(before, after, lengths) => Ok(HostValues::read(before)?
                        .ratios_of_parts(&HostValues::read(after)?, &lengths)),
                }
            })
            .as_deref()
            .map_err(|message| ResolveError::new(message.clone()))
    }
}

/// A probed value's numbers: a tensor's elements (read if lazy), or one number.
fn numbers(value: &Value) -> Result<Vec<f64>, String> {
    Vec::<f64>::from_value(value)
        .or_else(|_| f64::from_value(value).map(|x| vec![x]))
        .map_err(|e| {
            format!(
                "an activation must be a tensor or a number ({e}; is the backend's tensor type registered with giving_burn::probe_autodiff_tensors?)"
            )
        })
}

/// A statistic of a [`Packed`] vector: one element, or a range of them (a histogram).
enum Stat<B: Backend> {
    One(Arc<Packed<B>>, usize),
    Range(Arc<Packed<B>>, std::ops::Range<usize>),
}

impl<B: Backend> Resolve for Stat<B> {
    fn resolve(&self) -> Result<Value, ResolveError> {
        match self {
            Stat::One(packed, index) => {
                let values = packed.values()?;
                Ok(Value::F64(values.get(*index).copied().unwrap_or(f64::NAN)))
            }
            Stat::Range(packed, range) => {
                let values = packed.values()?;
                let rest = values.get(range.clone()).unwrap_or_default();
                Ok(Value::List(rest.iter().copied().map(Value::F64).collect()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_backends_read_in_place_and_the_others_with_one_transfer() {
        for cpu in ["flex", "ndarray", "cubecl<cpu>", "fusion<cubecl<cpu>>"] {
            assert!(is_cpu_backend(cpu), "{cpu}");
        }
        for gpu in [
            "cubecl<cuda>",
            "cubecl<wgpu<vulkan>>",
            "fusion<cubecl<cuda>>",
            "tch",
        ] {
            assert!(!is_cpu_backend(gpu), "{gpu}");
        }
    }

    #[test]
    fn parts_read_with_one_transfer_give_each_parts_statistics_and_ratio() {
        type F = burn::backend::Flex;
        let device = Default::default();
        let a = [-1.0, 0.0, 1.0, 2.0];
        let b = [3.0, 4.0];
        let tensor = |v: &[f64]| Tensor::<F, 1>::from_floats(v, &device);
        let all = Tensor::cat(vec![tensor(&a), tensor(&b)], 0);
        let packed = Packed::new(Work::StatsOfParts(all, vec![4, 2], 2));
        let mut expected = host::stats(&a, 2);
        expected.extend(host::stats(&b, 2));
        assert_eq!(packed.values().unwrap(), expected);
        let before = Tensor::cat(vec![tensor(&[1.0, 0.0]), tensor(&[3.0, 4.0])], 0);
        let after = Tensor::cat(vec![tensor(&[1.0, 1.0]), tensor(&[3.0, 4.5])], 0);
        let packed = Packed::new(Work::RatiosOfParts(before, after, vec![2, 2]));
        assert_eq!(packed.values().unwrap(), [1.0, 0.1]);
    }

    #[test]
    fn host_statistics_of_a_few_values() {
        // -1, 0, 1, 2 in 2 bins of width 1.5 from -1: [-1, 0] [1, 2].
        let out = host::stats(&[-1.0, 0.0, 1.0, 2.0], 2);
        let variance = (2.25 + 0.25 + 0.25 + 2.25) / 4.0;
        let expected = [
            6f64.sqrt(),
            0.5,
            f64::sqrt(variance),
            -1.0,
            2.0,
            0.25,
            0.0,
            0.0,
            2.0,
            2.0,
        ];
        assert_eq!(out, expected);
        assert_eq!(host::ratio(&[3.0, 4.0], &[3.0, 4.5]), 0.1);
    }
}
