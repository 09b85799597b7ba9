//! The f16 knobs on the GPU backends: wgpu (Mesa's software Vulkan where there is no GPU,
//! built with `--features wgpu`; SKIPPED where no Vulkan driver is installed) and CUDA (built
//! with `--features cuda`; SKIPPED where there is no NVIDIA device): the same values as on
//! `flex` within f16's rounding, every output an f16 value, the same rounding and overflow.

use burn::prelude::Backend;
use burn::tensor::Tensor;

use super::{B, F16_TOL, all_f16, close, conv_on, identity_layer, input, layer, values};
use crate::approx::ApproxConv;
use crate::knob::{Axis, Knob};

#[cfg(feature = "wgpu")]
#[test]
fn fp16_knobs_on_wgpu_match_flex() {
    let vulkan = ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"]
        .iter()
        .any(|dir| std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()));
    if !vulkan {
        eprintln!("SKIPPED: no Vulkan driver (apt-get install mesa-vulkan-drivers)");
        return;
    }
    match_flex::<burn::backend::Wgpu>(&Default::default());
}

#[cfg(feature = "cuda")]
#[test]
fn fp16_knobs_on_cuda_match_flex() {
    if !std::path::Path::new("/dev/nvidiactl").exists() {
        eprintln!("SKIPPED: no NVIDIA device");
        return;
    }
    match_flex::<burn::backend::Cuda>(&Default::default());
}

/// `t` (on `flex`) on `device`.
fn to_gpu<G: Backend, const D: usize>(t: Tensor<B, D>, device: &G::Device) -> Tensor<G, D> {
    Tensor::from_data(t.into_data(), device)
}

fn gpu_values<G: Backend>(t: Tensor<G, 4>) -> Vec<f32> {
    t.into_data().to_vec::<f32>().unwrap()
}

/// The f16 knobs on backend `G` against `flex`.
fn match_flex<G: Backend>(device: &G::Device) {
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
        let gpu_conv = conv_on::<G>(&conv, device);
        let x = input(channels, side);
        for &knob in &knobs {
            let (flex, _) = values(
                ApproxConv::new(&conv, knob, side)
                    .unwrap()
                    .forward(x.clone()),
            );
            let approx = ApproxConv::new(&gpu_conv, knob, side).unwrap();
            let gpu = gpu_values(approx.forward(to_gpu(x.clone(), device)));
            assert!(all_f16(&gpu), "{knob} c{channels}: not f16 values");
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
    let conv = conv_on::<G>(&identity_layer(), device);
    let rows = Knob::PerforateFp16 {
        axis: Axis::Rows,
        stride: 2,
        offset: 0,
    };
    let approx = ApproxConv::new(&conv, rows, 6).unwrap();
    let x = Tensor::<G, 4>::full([1, 1, 6, 6], 1.0 + 2f32.powi(-12), device);
    assert!(gpu_values(approx.forward(x)).iter().all(|&g| g == 1.0));
    let x = Tensor::<G, 4>::full([1, 1, 6, 6], 40000.0, device);
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
