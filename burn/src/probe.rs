//! Probed tensors: makes `#[probe]` give a burn tensor variable as a lazy value (read by the
//! consumer) instead of its type's name.

use burn::prelude::Backend;
use burn::tensor::Tensor;
use burn::tensor::backend::AutodiffBackend;
use giving::Value;

use crate::LazyTensor;

fn lazy<B: Backend, const D: usize>(tensor: &Tensor<B, D>) -> Value {
    LazyTensor::new(tensor.clone()).into()
}

fn detached<A: AutodiffBackend, const D: usize>(tensor: &Tensor<A, D>) -> Value {
    LazyTensor::<A::InnerBackend, D>::detached(tensor).into()
}

/// Makes probes give the float tensors (ranks 1 to 6) of backend `B` as lazy values: a probe
/// on `forward > x` then gives `x`'s elements, read off the training thread by whoever
/// consumes the event, instead of the tensor's type name. Registers nothing twice; call it
/// once per backend the program trains on.
///
/// ```
/// use burn::backend::Flex;
/// use burn::tensor::Tensor;
/// use giving::prelude::*;
///
/// #[giving::probe]
/// fn double(x: Tensor<Flex, 1>) -> Tensor<Flex, 1> {
///     let y = x * 2.0;
///     y
/// }
///
/// giving_burn::probe_tensors::<Flex>();
/// let gv = giving::given();
/// let ys = gv.spawn(gv.probe("double > y").unwrap().key::<Vec<f64>>("y").collect::<Vec<_>>());
/// double(Tensor::from_floats([1.0, 2.0], &Default::default()));
/// gv.finish().unwrap();
/// assert_eq!(ys.join().unwrap(), vec![vec![2.0, 4.0]]);
/// ```
pub fn probe_tensors<B: Backend>() {
    // SAFETY: each call registers `Tensor<B, D>`, which has no lifetime parameters.
    unsafe {
        giving::probe::register_value::<Tensor<B, 1>>(lazy::<B, 1>);
        giving::probe::register_value::<Tensor<B, 2>>(lazy::<B, 2>);
        giving::probe::register_value::<Tensor<B, 3>>(lazy::<B, 3>);
        giving::probe::register_value::<Tensor<B, 4>>(lazy::<B, 4>);
        giving::probe::register_value::<Tensor<B, 5>>(lazy::<B, 5>);
        giving::probe::register_value::<Tensor<B, 6>>(lazy::<B, 6>);
    }
}

/// [`probe_tensors`] for an autodiff backend and its inner backend: an autodiff tensor is given
/// detached from its graph, so a consumer holding the value keeps no part of the graph alive.
pub fn probe_autodiff_tensors<A: AutodiffBackend>() {
    probe_tensors::<A::InnerBackend>();
    // SAFETY: each call registers `Tensor<A, D>`, which has no lifetime parameters.
    unsafe {
        giving::probe::register_value::<Tensor<A, 1>>(detached::<A, 1>);
        giving::probe::register_value::<Tensor<A, 2>>(detached::<A, 2>);
        giving::probe::register_value::<Tensor<A, 3>>(detached::<A, 3>);
        giving::probe::register_value::<Tensor<A, 4>>(detached::<A, 4>);
        giving::probe::register_value::<Tensor<A, 5>>(detached::<A, 5>);
        giving::probe::register_value::<Tensor<A, 6>>(detached::<A, 6>);
    }
}
