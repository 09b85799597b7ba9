//! burn glue: a burn tensor given as a lazy [`giving::Value`], read by the consumer.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use burn::prelude::Backend;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Tensor, TensorData};
use giving::{ReadMany, Resolve, ResolveError, Value};

static RESOLUTIONS: AtomicU64 = AtomicU64::new(0);

/// How many [`LazyTensor`]s have been read (resolved) in this process so far.
///
/// A diagnostic: the training loops never resolve their own lazy values, so with no consumer
/// reading them this count does not move while a model trains.
pub fn resolution_count() -> u64 {
    RESOLUTIONS.load(Ordering::Relaxed)
}

/// Counts one read of a device value (a lazy tensor, a model watch's statistics).
pub(crate) fn count_resolution() {
    RESOLUTIONS.fetch_add(1, Ordering::Relaxed);
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

    /// The wrapped tensor's elements in one dimension (a handle clone and a reshape: nothing
    /// is read).
    pub(crate) fn flat(&self) -> Tensor<B, 1> {
        self.tensor.clone().reshape([-1])
    }
}

/// The elements, in one dimension, of `source` if it is a [`LazyTensor`] of backend `B` (of
/// any rank the probes give, 1 to 6): for work done on the tensor where it is.
pub(crate) fn flat_on_device<B: Backend>(source: &dyn std::any::Any) -> Option<Tensor<B, 1>> {
    fn of_rank<B: Backend, const D: usize>(source: &dyn std::any::Any) -> Option<Tensor<B, 1>> {
        source
            .downcast_ref::<LazyTensor<B, D>>()
            .map(LazyTensor::flat)
    }
    of_rank::<B, 1>(source)
        .or_else(|| of_rank::<B, 2>(source))
        .or_else(|| of_rank::<B, 3>(source))
        .or_else(|| of_rank::<B, 4>(source))
        .or_else(|| of_rank::<B, 5>(source))
        .or_else(|| of_rank::<B, 6>(source))
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
        count_resolution();
        let data = self.tensor.clone().try_into_data().map_err(|e| {
            ResolveError::new(format!(
                "reading a {} tensor: {e}",
                B::name(&self.tensor.device())
            ))
        })?;
        Ok(data_to_value(&data))
    }

    /// Many lazy tensors of this type are read with one transfer per device.
    fn read_many(&self) -> Option<ReadMany> {
        Some(read_many::<B, D>)
    }
}

/// Reads lazy tensors together: per device, flattened, concatenated, read once (one device
/// sync and one transfer instead of one per tensor) and split back, each tensor giving what
/// [`Resolve::resolve`] would give it.
fn read_many<B: Backend, const D: usize>(
    sources: &[&dyn Resolve],
) -> Vec<Result<Value, ResolveError>> {
    let tensors: Vec<&LazyTensor<B, D>> = sources
        .iter()
        .filter_map(|&source| (source as &dyn std::any::Any).downcast_ref())
        .collect();
    if tensors.len() != sources.len() {
        return sources.iter().map(|source| source.resolve()).collect();
    }
    let mut results: Vec<Option<Result<Value, ResolveError>>> = vec![None; tensors.len()];
    let mut devices: Vec<(B::Device, Vec<usize>)> = Vec::new();
    for (i, lazy) in tensors.iter().enumerate() {
        let device = lazy.tensor.device();
        match devices.iter_mut().find(|(d, _)| *d == device) {
            Some((_, indices)) => indices.push(i),
            None => devices.push((device, vec![i])),
        }
    }
    for (device, indices) in devices {
        let flat: Vec<Tensor<B, 1>> = indices.iter().map(|&i| tensors[i].flat()).collect();
        let sizes: Vec<usize> = flat.iter().map(|t| t.dims()[0]).collect();
        RESOLUTIONS.fetch_add(indices.len() as u64, Ordering::Relaxed);
        match Tensor::cat(flat, 0).try_into_data() {
            Ok(data) => {
                let mut numbers = data.iter::<f64>().map(Value::F64);
                for (&i, &size) in indices.iter().zip(&sizes) {
                    let mut values: Vec<Value> = numbers.by_ref().take(size).collect();
                    results[i] = Some(Ok(match values.len() {
                        1 => values.swap_remove(0),
                        _ => Value::List(values),
                    }));
                }
            }
            Err(e) => {
                let error = ResolveError::new(format!(
                    "reading {} tensors together on {}: {e}",
                    indices.len(),
                    B::name(&device)
                ));
                for &i in &indices {
                    results[i] = Some(Err(error.clone()));
                }
            }
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(ResolveError::new("tensor not read"))))
        .collect()
}

impl<B: Backend, const D: usize> From<LazyTensor<B, D>> for Value {
    fn from(tensor: LazyTensor<B, D>) -> Value {
        Value::lazy(tensor)
    }
}
