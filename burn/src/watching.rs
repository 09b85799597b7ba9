//! [`Watching`]: an optimiser that watches the model it steps, so that burn-train's `Learner`
//! (which hands gradients to nothing but its optimiser) is watched in one line.

use std::sync::{Arc, Mutex, PoisonError};

use burn::module::AutodiffModule;
use burn::optim::{GradientsParams, MultiGradientsParams, Optimizer};
use burn::prelude::Backend;
use burn::tensor::backend::AutodiffBackend;

use crate::ModelWatch;

/// Wraps an optimiser: each [`step`](Optimizer::step) first shows the module and its
/// gradients to a [`ModelWatch`], at the optimiser's own step count (0, 1, 2, …), then steps.
/// This is where burn-train's `Learner` can be watched: its `TrainStep::optimize` calls the
/// optimiser with the model and the step's gradients, and nothing else sees them. Made by
/// [`ModelWatch::optimizer`]; clones share one watch and one step count.
///
/// Steps taken with gradients spread over several devices
/// ([`step_multi`](Optimizer::step_multi)) are counted but not watched: their gradients live
/// on each device apart.
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
/// let gv = given();
/// let params = gv.spawn(gv.stream().where_(["norm"]).key::<String>("param").collect::<Vec<_>>());
/// // The one line: the optimiser the loop (or a Learner) already has, watched every 2 steps.
/// let mut optim = ModelWatch::new().every(2).optimizer(SgdConfig::new().init());
/// for _ in 0..3 {
///     let loss = model.forward(Tensor::<B, 2>::ones([4, 3], &device)).mean();
///     let grads = GradientsParams::from_grads(loss.backward(), &model);
///     model = optim.step(0.1, model, grads);
/// }
/// gv.finish().unwrap();
/// // Steps 0 and 2, weight and bias, weights and gradients.
/// assert_eq!(params.join().unwrap(), ["weight", "weight", "bias", "bias"].repeat(2));
/// ```
pub struct Watching<O, B: Backend> {
    optim: O,
    watch: Arc<Mutex<Counted<B>>>,
}

/// The watch and the steps taken so far.
struct Counted<B: Backend> {
    steps: u64,
    watch: ModelWatch<B>,
}

impl<B: Backend> ModelWatch<B> {
    /// `optim`, stepping as before and showing this watch each step's module and gradients
    /// first (see [`Watching`]).
    pub fn optimizer<O>(self, optim: O) -> Watching<O, B> {
        Watching {
            optim,
            watch: Arc::new(Mutex::new(Counted {
                steps: 0,
                watch: self,
            })),
        }
    }
}

impl<O, B: Backend> Watching<O, B> {
    /// Steps taken so far (the next step's number).
    pub fn steps(&self) -> u64 {
        self.counted().steps
    }

    /// The optimiser inside.
    pub fn inner(&self) -> &O {
        &self.optim
    }

    fn counted(&self) -> std::sync::MutexGuard<'_, Counted<B>> {
        // A panic inside a watch leaves only statistics half given: the count stays right.
        self.watch.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<O: Clone, B: Backend> Clone for Watching<O, B> {
    fn clone(&self) -> Self {
        Self {
            optim: self.optim.clone(),
            watch: self.watch.clone(),
        }
    }
}

impl<O, B: Backend> std::fmt::Debug for Watching<O, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counted = self.counted();
        f.debug_struct("Watching")
            .field("steps", &counted.steps)
            .field("watch", &counted.watch)
            .finish_non_exhaustive()
    }
}

impl<M, A, O> Optimizer<M, A> for Watching<O, A::InnerBackend>
where
    A: AutodiffBackend,
    M: AutodiffModule<A>,
    O: Optimizer<M, A>,
{
    type Record = O::Record;

    fn step(&mut self, lr: f64, module: M, grads: GradientsParams) -> M {
        {
            let mut counted = self.counted();
            let step = counted.steps;
            counted.watch.observe(step, &module, &grads);
            counted.steps += 1;
        }
        self.optim.step(lr, module, grads)
    }

    fn step_multi(&mut self, lr: f64, module: M, grads: MultiGradientsParams) -> M {
        self.counted().steps += 1;
        self.optim.step_multi(lr, module, grads)
    }

    fn to_record(&self) -> Self::Record {
        self.optim.to_record()
    }

    fn load_record(self, record: Self::Record) -> Self {
        Self {
            optim: self.optim.load_record(record),
            watch: self.watch,
        }
    }
}
