//! The bundled burn models: an [`Mlp`] and a small [`Cnn`] for image classification, a
//! VGG-style [`Vgg`] for 32×32 RGB images (the network the tuner approximates), and a tiny
//! character-level transformer ([`CharLm`]).

mod charlm;
mod cnn;
mod mlp;
mod vgg;

pub use charlm::{CharLm, CharLmConfig};
pub use cnn::{Cnn, CnnConfig};
pub use mlp::{Mlp, MlpConfig};
pub use vgg::{Vgg, VggConfig};

use std::sync::Mutex;

use burn::module::{Module, ModuleVisitor, Param};
use burn::prelude::Backend;
use burn::tensor::Tensor;

/// A model that maps a batch of flat feature rows `[batch, dim]` to class logits
/// `[batch, classes]`.
pub trait Classifier<B: Backend> {
    /// Class logits of a batch.
    fn logits(&self, features: Tensor<B, 2>) -> Tensor<B, 2>;
}

/// Serialises seeding + initialisation: burn backends keep one global random generator, so
/// two models initialised at once on different threads (tests) would interleave their draws.
static INIT_LOCK: Mutex<()> = Mutex::new(());

/// Touches every parameter, so that burn's lazy initialisation happens now.
struct Materialize;

impl<B: Backend> ModuleVisitor<B> for Materialize {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        let _ = param.val();
    }
}

/// Seeds the backend and initialises a model with `init`, deterministically: equal seeds give
/// equal parameters, even when other threads initialise models at the same time.
pub fn init_seeded<B: Backend, M: Module<B>>(
    device: &B::Device,
    seed: u64,
    init: impl FnOnce(&B::Device) -> M,
) -> M {
    let _guard = INIT_LOCK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    B::seed(device, seed);
    let model = init(device);
    model.visit(&mut Materialize);
    model
}
