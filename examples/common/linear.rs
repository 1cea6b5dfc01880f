//! The Hands-On chapter's linear layer, shared by the `linear` and
//! `mnist` examples.

use morok::{Error, Tensor};

/// `y = x @ W.T + b`.
pub struct Linear {
    /// Shape `[out_features, in_features]`.
    weight: Tensor,
    /// Shape `[out_features]`.
    bias: Tensor,
}

impl Linear {
    /// A layer with deterministic weights (real code would use a proper
    /// random initialization).
    pub fn new(in_features: usize, out_features: usize) -> Self {
        let weight_data: Vec<f32> = (0..in_features * out_features)
            .map(|i| (i as f32 * 0.1).sin() * 0.1)
            .collect();
        let bias_data = vec![0.0f32; out_features];

        Self {
            weight: Tensor::from_slice(&weight_data)
                .reshape(&[out_features as isize, in_features as isize])
                .expect("reshape failed"),
            bias: Tensor::from_slice(&bias_data),
        }
    }

    /// Applies the layer to `[in_features]` or `[batch, in_features]`.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor, Error> {
        // y = x @ W.T + b
        let weight_t = self.weight.transpose(0, 1)?;
        let out = x.dot(&weight_t)?;
        Ok(&out + &self.bias)
    }
}
