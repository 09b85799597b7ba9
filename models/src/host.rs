//! Inference kernels that run on the tensor's memory in place of a chain of backend
//! operations, where the backend keeps its tensors in host memory.
//!
//! burn's CPU backend (`Flex`) computes a `2×2` max pooling through its general 3-D pooling
//! loop, which also records the index of every maximum: on the bundled VGG that is a fifth of
//! a pass (52 ms of about 350 for 250 images on the 32-pixel maps), against under 5 ms for one
//! loop reading the input once. On `Flex`, `into_data` and `from_data` move the buffer without
//! copying it, so such a loop costs only its own pass; on a GPU backend they would copy the
//! tensor to the host and back, so there the backend's own operations are kept. The kernels
//! compute exactly what the operations they replace compute (the same `f32` arithmetic in the
//! same order), which the tests check.

use std::any::TypeId;

use burn::prelude::Backend;
use burn::tensor::{DType, Tensor, TensorData};

/// Whether `B` keeps its tensors in host memory, so that reading one as a slice and building
/// one from a vector move buffers instead of copying them (`Flex`, without autodiff: a kernel
/// run on the data would not be differentiated).
pub fn on_host<B: Backend>() -> bool {
    #[cfg(feature = "flex")]
    {
        TypeId::of::<B>() == TypeId::of::<burn::backend::Flex>()
    }
    #[cfg(not(feature = "flex"))]
    {
        let _ = TypeId::of::<B>;
        false
    }
}

/// Runs `kernel` on the `f32` values of `x` (row-major, `x.dims()`) and returns the tensor of
/// the values and shape it produces, on `x`'s device; `None` (and `x` untouched) when `B` is
/// not a host backend or `x` is not `f32`.
pub fn map_host<B: Backend, const D: usize, const E: usize>(
    x: Tensor<B, D>,
    kernel: impl FnOnce(&[f32], [usize; D]) -> (Vec<f32>, [usize; E]),
) -> Result<Tensor<B, E>, Tensor<B, D>> {
    if !on_host::<B>() || x.dtype() != DType::F32 {
        return Err(x);
    }
    let device = x.device();
    let dims = x.dims();
    let data = x.into_data();
    let Ok(values) = data.as_slice::<f32>() else {
        return Err(Tensor::from_data(data, &device));
    };
    let (out, shape) = kernel(values, dims);
    Ok(Tensor::from_data(TensorData::new(out, shape), &device))
}

/// ReLU of the `2×2` max pooling (stride 2, no padding, odd trailing rows and columns dropped)
/// of `x` `[batch, channels, h, w]`: what `relu(max_pool2d(x))` computes, in one pass over the
/// input on a host backend, through the backend's operations elsewhere.
pub fn relu_max_pool2<B: Backend>(x: Tensor<B, 4>) -> Tensor<B, 4> {
    map_host(x, |v, [b, c, h, w]| {
        let (oh, ow) = (h / 2, w / 2);
        let mut out = Vec::with_capacity(b * c * oh * ow);
        for plane in v.chunks_exact(h * w) {
            for r in 0..oh {
                let top = &plane[2 * r * w..2 * r * w + 2 * ow];
                let bottom = &plane[(2 * r + 1) * w..(2 * r + 1) * w + 2 * ow];
                out.extend(
                    top.chunks_exact(2)
                        .zip(bottom.chunks_exact(2))
                        .map(|(t, d)| {
                            // burn's pooling keeps the first maximum in row-major window order.
                            let mut m = t[0];
                            for &v in [t[1], d[0], d[1]].iter() {
                                if v > m {
                                    m = v;
                                }
                            }
                            m.max(0.0)
                        }),
                );
            }
        }
        (out, [b, c, oh, ow])
    })
    .unwrap_or_else(|x| {
        let pooled = burn::tensor::module::max_pool2d(x, [2, 2], [2, 2], [0, 0], [1, 1], false);
        burn::tensor::activation::relu(pooled)
    })
}

#[cfg(test)]
mod tests {
    use burn::backend::{Autodiff, Flex};
    use burn::tensor::Distribution;

    use super::*;

    #[test]
    fn flex_is_a_host_backend_and_autodiff_is_not() {
        assert!(on_host::<Flex>());
        assert!(!on_host::<Autodiff<Flex>>());
    }

    #[test]
    fn fused_pooling_equals_burns_pooling_then_relu() {
        let device = Default::default();
        for [h, w] in [[8, 8], [7, 5], [2, 6]] {
            let x: Tensor<Flex, 4> =
                Tensor::random([3, 4, h, w], Distribution::Normal(0.0, 1.0), &device);
            let expected = burn::tensor::activation::relu(burn::tensor::module::max_pool2d(
                x.clone(),
                [2, 2],
                [2, 2],
                [0, 0],
                [1, 1],
                false,
            ));
            let got = relu_max_pool2(x.clone());
            assert_eq!(got.dims(), expected.dims());
            assert_eq!(got.into_data(), expected.into_data(), "{h}×{w}");
            // The autodiff backend takes burn's operations, with the same result.
            let ad: Tensor<Autodiff<Flex>, 4> = Tensor::from_data(x.into_data(), &device);
            let ad = relu_max_pool2(ad);
            assert_eq!(ad.dims(), [3, 4, h / 2, w / 2]);
        }
    }
}
