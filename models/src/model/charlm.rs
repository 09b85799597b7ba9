//! A tiny character-level transformer language model.

use burn::config::Config;
use burn::module::Module;
use burn::nn::attention::generate_autoregressive_mask;
use burn::nn::transformer::{
    TransformerEncoder, TransformerEncoderConfig, TransformerEncoderInput,
};
use burn::nn::{
    Embedding, EmbeddingConfig, Initializer, LayerNorm, LayerNormConfig, Linear, LinearConfig,
};
use burn::prelude::Backend;
use burn::tensor::{Int, Tensor};

/// Configuration of a [`CharLm`]: token and position embeddings, a causal pre-norm
/// transformer encoder, a final layer norm and a linear head over the vocabulary.
#[derive(Config, Debug)]
pub struct CharLmConfig {
    /// Vocabulary size.
    pub vocab: usize,
    /// Longest context (the number of positions).
    pub context: usize,
    /// Width of the model.
    #[config(default = 64)]
    pub d_model: usize,
    /// Attention heads (must divide `d_model`).
    #[config(default = 4)]
    pub heads: usize,
    /// Transformer layers.
    #[config(default = 2)]
    pub layers: usize,
    /// Width of the feed-forward blocks.
    #[config(default = 256)]
    pub d_ff: usize,
}

impl CharLmConfig {
    /// Initialises the model on `device` (with the backend's current random state).
    pub fn init<B: Backend>(&self, device: &B::Device) -> CharLm<B> {
        let embedding = |n| {
            EmbeddingConfig::new(n, self.d_model)
                .with_initializer(Initializer::Normal {
                    mean: 0.0,
                    std: 0.02,
                })
                .init(device)
        };
        CharLm {
            tokens: embedding(self.vocab),
            positions: embedding(self.context),
            encoder: TransformerEncoderConfig::new(
                self.d_model,
                self.d_ff,
                self.heads,
                self.layers,
            )
            .with_dropout(0.0)
            .with_norm_first(true)
            .init(device),
            norm: LayerNormConfig::new(self.d_model).init(device),
            head: LinearConfig::new(self.d_model, self.vocab).init(device),
            context: self.context,
        }
    }
}

/// A character-level transformer: predicts each next character of its input.
#[derive(Module, Debug)]
pub struct CharLm<B: Backend> {
    tokens: Embedding<B>,
    positions: Embedding<B>,
    encoder: TransformerEncoder<B>,
    norm: LayerNorm<B>,
    head: Linear<B>,
    context: usize,
}

#[giving::probe]
impl<B: Backend> CharLm<B> {
    /// The longest input this model takes.
    pub fn context(&self) -> usize {
        self.context
    }

    /// Next-token logits `[batch, seq, vocab]` of tokens `[batch, seq]` (`seq ≤ context`).
    pub fn forward(&self, tokens: Tensor<B, 2, Int>) -> Tensor<B, 3> {
        let [batch, seq] = tokens.dims();
        let device = tokens.device();
        let positions = Tensor::<B, 1, Int>::arange(0..seq as i64, &device)
            .reshape([1, seq])
            .repeat_dim(0, batch);
        let x = self.tokens.forward(tokens) + self.positions.forward(positions);
        let mask = generate_autoregressive_mask::<B>(batch, seq, &device);
        let x = self
            .encoder
            .forward(TransformerEncoderInput::new(x).mask_attn(mask));
        self.head.forward(self.norm.forward(x))
    }
}
