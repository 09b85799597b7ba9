//! burn glue: a burn tensor given as a lazy [`giving::Value`], read by the consumer.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use burn::prelude::Backend;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Tensor, TensorData};
use giving::{Resolve, ResolveError, Value};

static RESOLUTIONS: AtomicU64 = AtomicU64::new(0);

/// How many [`LazyTensor`]s have been read (resolved) in this process so far.
///
/// A diagnostic: the training loops never resolve their own lazy values, so with no consumer
/// reading them this count does not move while a model trains.
pub fn resolution_count() -> u64 {
    RESOLUTIONS.load(Ordering::Relaxed)
}

/// A burn tensor handed to [`give!`](giving::give) without reading it.
///
/// Giving it costs a clone of the tensor handle (a reference count, no copy, no device sync).
/// The consumer that first reads the value calls [`Resolve::resolve`], which reads the tensor
/// (`into_data`, a device sync on GPU backends) off the training thread: a one-element tensor
/// becomes [`Value::F64`], a larger one a [`Value::List`] of its elements (row-major).
///
/// ```
/// use burn::backend::Flex;
/// use burn::tensor::Tensor;
/// use giving::Value;
/// use giving_burn::LazyTensor;
///
/// let loss = Tensor::<Flex, 1>::from_floats([0.25], &Default::default());
/// let value = Value::from(LazyTensor::new(loss));
/// assert!(matches!(value, Value::Lazy(_)));
/// assert_eq!(value.resolved().unwrap().as_f64(), Some(0.25));
/// ```
#[derive(Clone)]
pub struct LazyTensor<B: Backend, const D: usize> {
    tensor: Tensor<B, D>,
}

impl<B: Backend, const D: usize> LazyTensor<B, D> {
    /// Wraps a tensor (a handle clone is enough: `LazyTensor::new(loss.clone())`).
    pub fn new(tensor: Tensor<B, D>) -> Self {
        Self { tensor }
    }

    /// The wrapped tensor.
    pub fn tensor(&self) -> &Tensor<B, D> {
        &self.tensor
    }
}

impl<B: Backend, const D: usize> LazyTensor<B, D> {
    /// Wraps the value of an autodiff tensor, detached from its graph, so that the consumer
    /// holding it keeps no part of the autodiff graph alive.
    pub fn detached<A: AutodiffBackend<InnerBackend = B>>(tensor: &Tensor<A, D>) -> Self {
        Self::new(tensor.clone().inner())
    }
}

impl<B: Backend, const D: usize> fmt::Debug for LazyTensor<B, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazyTensor")
            .field("shape", &self.tensor.dims())
            .finish()
    }
}

/// Converts tensor data to a [`Value`]: one element gives a number, more give a list
/// (row-major). Floats become [`Value::F64`], booleans [`Value::Bool`], integers [`Value::I64`].
pub fn data_to_value(data: &TensorData) -> Value {
    let numbers: Vec<Value> = if data.dtype.is_float() {
        data.iter::<f64>().map(Value::F64).collect()
    } else if data.dtype.is_bool() {
        data.iter::<bool>().map(Value::Bool).collect()
    } else {
        data.iter::<i64>().map(Value::I64).collect()
    };
    match <[Value; 1]>::try_from(numbers) {
        Ok([one]) => one,
        Err(many) => Value::List(many),
    }
}

impl<B: Backend, const D: usize> Resolve for LazyTensor<B, D> {
    fn resolve(&self) -> Result<Value, ResolveError> {
        RESOLUTIONS.fetch_add(1, Ordering::Relaxed);
        let data = self.tensor.clone().try_into_data().map_err(|e| {
            ResolveError::new(format!(
                "reading a {} tensor: {e}",
                B::name(&self.tensor.device())
            ))
        })?;
        Ok(data_to_value(&data))
    }
}

impl<B: Backend, const D: usize> From<LazyTensor<B, D>> for Value {
    fn from(tensor: LazyTensor<B, D>) -> Value {
        Value::lazy(tensor)
    }
}
