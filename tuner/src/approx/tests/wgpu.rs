//! The f16 knobs on the wgpu backend (Mesa's software Vulkan where there is no GPU): the same
//! values as on `flex` within f16's rounding, every output an f16 value. Built with
//! `--features wgpu`; says SKIPPED where no Vulkan driver is installed.

use burn::backend::Wgpu;
use burn::module::Param;
use burn::nn::PaddingConfig2d;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::tensor::Tensor;

use super::{B, F16_TOL, all_f16, close, identity_layer, input, layer, values};
use crate::approx::ApproxConv;
use crate::knob::{Axis, Knob};

type G = Wgpu;

fn vulkan_available() -> bool {
    ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"]
        .iter()
        .any(|dir| std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()))
}

/// `t` (on `flex`) on the wgpu device.
fn to_gpu<const D: usize>(t: Tensor<B, D>) -> Tensor<G, D> {
    Tensor::from_data(t.into_data(), &Default::default())
}

/// `conv` with the same weights and bias, on the wgpu device.
fn conv_on_gpu(conv: &Conv2d<B>) -> Conv2d<G> {
    let [c_out, c_in, kh, kw] = conv.weight.dims();
    let mut gpu = Conv2dConfig::new([c_in, c_out], [kh, kw])
        .with_padding(PaddingConfig2d::Same)
        .init(&Default::default());
    gpu.weight = Param::from_tensor(to_gpu(conv.weight.val()));
    gpu.bias = conv
        .bias
        .as_ref()
        .map(|b| Param::from_tensor(to_gpu(b.val())));
    gpu
}

fn gpu_values(t: Tensor<G, 4>) -> Vec<f32> {
    t.into_data().to_vec::<f32>().unwrap()
}

#[test]
fn fp16_knobs_on_wgpu_match_flex() {
    if !vulkan_available() {
        eprintln!("SKIPPED: no Vulkan driver (apt-get install mesa-vulkan-drivers)");
        return;
    }
    let side = 8;
    let mut knobs = vec![];
    for axis in [Axis::Rows, Axis::Cols] {
        for stride in 2..=4 {
            knobs.push(Knob::PerforateFp16 {
                axis,
                stride,
                offset: stride - 1,
            });
        }
    }
    for stride in 2..=4 {
        knobs.push(Knob::SampleFp16 { stride, offset: 1 });
    }
    for channels in [5, 1] {
        let conv = layer(channels, 4);
        let gpu_conv = conv_on_gpu(&conv);
        let x = input(channels, side);
        for &knob in &knobs {
            let (flex, _) = values(
                ApproxConv::new(&conv, knob, side)
                    .unwrap()
                    .forward(x.clone()),
            );
            let approx = ApproxConv::new(&gpu_conv, knob, side).unwrap();
            let gpu = gpu_values(approx.forward(to_gpu(x.clone())));
            assert!(all_f16(&gpu), "{knob} c{channels}: not f16 values on wgpu");
            for (i, (g, f)) in gpu.iter().zip(&flex).enumerate() {
                assert!(
                    close(*g, *f, 2.0 * F16_TOL),
                    "{knob} c{channels} [{i}]: {g} vs {f}"
                );
            }
        }
    }
    // A value f16 cannot hold comes out rounded, and a mean of two neighbours past f16's
    // largest value overflows, as on `flex`.
    let conv = conv_on_gpu(&identity_layer());
    let rows = Knob::PerforateFp16 {
        axis: Axis::Rows,
        stride: 2,
        offset: 0,
    };
    let approx = ApproxConv::new(&conv, rows, 6).unwrap();
    let x = Tensor::<G, 4>::full([1, 1, 6, 6], 1.0 + 2f32.powi(-12), &Default::default());
    assert!(gpu_values(approx.forward(x)).iter().all(|&g| g == 1.0));
    let x = Tensor::<G, 4>::full([1, 1, 6, 6], 40000.0, &Default::default());
    let got = gpu_values(approx.forward(x));
    for r in 0..6 {
        let expected = if r == 2 || r == 4 {
            f32::INFINITY
        } else {
            40000.0
        };
        assert!(
            got[r * 6..(r + 1) * 6].iter().all(|&g| g == expected),
            "row {r}: {got:?}"
        );
    }
}
