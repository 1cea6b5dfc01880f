//! Learning-rate schedules: the rate for a step number, to pass to
//! [`super::Optimizer::set_lr`] (which changes a buffer, not the graph).

/// A learning rate as a function of the step (or epoch) number.
pub trait LrSchedule {
    /// The rate at step `step` (0-based).
    fn lr(&self, step: usize) -> f64;
}

/// `base * gamma^(step / step_size)` (PyTorch's `StepLR`).
#[derive(Clone, Copy, Debug)]
pub struct StepLr {
    /// The initial rate.
    pub base: f64,
    /// Steps between decays (0 is taken as 1).
    pub step_size: usize,
    /// The decay factor.
    pub gamma: f64,
}

impl LrSchedule for StepLr {
    fn lr(&self, step: usize) -> f64 {
        let k = step / self.step_size.max(1);
        self.base * self.gamma.powi(k.min(i32::MAX as usize) as i32)
    }
}

/// Linear warm-up from 0 to `base` over `warmup` steps, then a cosine
/// decay to `min` at step `total` (and `min` after it).
#[derive(Clone, Copy, Debug)]
pub struct CosineWarmup {
    /// The peak rate, reached at the end of the warm-up.
    pub base: f64,
    /// The final rate.
    pub min: f64,
    /// Warm-up steps.
    pub warmup: usize,
    /// Steps in all.
    pub total: usize,
}

impl LrSchedule for CosineWarmup {
    fn lr(&self, step: usize) -> f64 {
        if step < self.warmup {
            return self.base * (step + 1) as f64 / self.warmup as f64;
        }
        if step >= self.total {
            return self.min;
        }
        let span = (self.total - self.warmup).max(1) as f64;
        let t = (step - self.warmup) as f64 / span;
        self.min + 0.5 * (self.base - self.min) * (1.0 + (std::f64::consts::PI * t).cos())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_lr_decays_every_step_size() {
        let s = StepLr {
            base: 1.0,
            step_size: 3,
            gamma: 0.5,
        };
        let got: Vec<f64> = (0..7).map(|i| s.lr(i)).collect();
        assert_eq!(got, [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25]);
    }

    #[test]
    fn cosine_warms_up_then_decays_to_the_minimum() {
        let s = CosineWarmup {
            base: 1.0,
            min: 0.1,
            warmup: 4,
            total: 14,
        };
        assert_eq!(s.lr(0), 0.25);
        assert_eq!(s.lr(3), 1.0);
        assert!((s.lr(4) - 1.0).abs() < 1e-12);
        assert!((s.lr(9) - 0.55).abs() < 1e-12);
        assert!((s.lr(14) - 0.1).abs() < 1e-12);
        assert_eq!(s.lr(100), 0.1);
    }
}
