//! A burn loop: an MLP regression with its own `forward_loss`, Adam, and batches of `images`.

#[derive(burn::module::Module, Debug)]
pub struct Model<B: burn::prelude::Backend> {
    linear: burn::nn::Linear<B>,
}

#[derive(Clone, Debug)]
pub struct Batch<B: burn::prelude::Backend> {
    pub images: burn::tensor::Tensor<B, 2>,
    pub targets: burn::tensor::Tensor<B, 2>,
}

impl<B: burn::prelude::Backend> Model<B> {
    pub fn forward_loss(&self, batch: Batch<B>) -> burn::tensor::Tensor<B, 1> {
        let output = self.linear.forward(batch.images);
        (output - batch.targets).powi_scalar(2).mean()
    }
}

pub fn snippet<B: burn::tensor::backend::AutodiffBackend>(
    device: B::Device,
    epochs: usize,
    lr: f64,
) -> anyhow::Result<()> {
    let mut model = Model { linear: burn::nn::LinearConfig::new(4, 1).init(&device) };
    let mut optim = burn::optim::AdamConfig::new().init::<B, Model<B>>();
    let batches_per_epoch = 8;
    let batches = || {
        (0..batches_per_epoch).map(|_| Batch::<B> {
            images: burn::tensor::Tensor::ones([16, 4], &device),
            targets: burn::tensor::Tensor::zeros([16, 1], &device),
        })
    };
    let total_steps = epochs * batches_per_epoch;
    let mut step = 0u64;
    // SNIPPET
    Ok(())
}

#[test]
fn runs() {
    snippet::<burn::backend::Autodiff<burn::backend::Flex>>(Default::default(), 2, 1e-2).unwrap();
}
