//! The optimizers against their update rules computed on the host in f64
//! (PyTorch's formulas), the PyTorch-style `backward` + `step` path, and
//! the errors of bad optimizer input.

use morok::optim::{Adam, AdamOptions, Optimizer, Sgd, SgdOptions};
use morok::Tensor;

const W0: [f32; 3] = [1.0, -2.0, 3.0];
const C: [f32; 3] = [0.5, 1.0, 2.0];

/// `sum(c * w²)`, whose gradient is `2 c w`.
fn loss_of(w: &Tensor) -> Tensor {
    let c = Tensor::from_slice(&C);
    w.mul(w).unwrap().mul(&c).unwrap().sum(None, false).unwrap()
}

fn grad_at(w: &[f64]) -> Vec<f64> {
    w.iter().zip(C).map(|(w, c)| 2.0 * c as f64 * w).collect()
}

fn assert_close(got: &[f32], want: &[f64], what: &str) {
    for (g, w) in got.iter().zip(want) {
        assert!(
            (*g as f64 - w).abs() <= 1e-5 * (1.0 + w.abs()),
            "{what}: got {got:?}, want {want:?}"
        );
    }
}

#[test]
fn sgd_with_momentum_nesterov_and_weight_decay_follows_its_rule() {
    for nesterov in [false, true] {
        let w = Tensor::from_slice(&W0);
        let opts = SgdOptions {
            lr: 0.1,
            momentum: 0.9,
            nesterov,
            weight_decay: 0.1,
        };
        let mut opt = Sgd::new(std::slice::from_ref(&w), opts).unwrap();
        let mut host: Vec<f64> = W0.iter().map(|&v| v as f64).collect();
        let mut b = [0.0; 3];
        for step in 0..4 {
            let loss = opt.minimize(&loss_of(&w)).unwrap();
            let want_loss: f64 = host.iter().zip(C).map(|(w, c)| c as f64 * w * w).sum();
            assert_close(&loss.to_vec::<f32>().unwrap(), &[want_loss], "loss");
            let g: Vec<f64> = grad_at(&host)
                .iter()
                .zip(&host)
                .map(|(g, p)| g + 0.1 * p)
                .collect();
            for i in 0..3 {
                b[i] = 0.9 * b[i] + g[i];
                let d = if nesterov { g[i] + 0.9 * b[i] } else { b[i] };
                host[i] -= 0.1 * d;
            }
            assert_close(&w.to_vec::<f32>().unwrap(), &host, &format!("step {step}"));
        }
    }
}

#[test]
fn adam_and_adamw_follow_their_rules() {
    for decoupled in [false, true] {
        let w = Tensor::from_slice(&W0);
        let opts = AdamOptions {
            lr: 0.05,
            betas: (0.8, 0.95),
            eps: 1e-6,
            weight_decay: 0.2,
            decoupled,
        };
        let mut opt = Adam::new(std::slice::from_ref(&w), opts).unwrap();
        let mut host: Vec<f64> = W0.iter().map(|&v| v as f64).collect();
        let (mut m, mut v) = (vec![0.0; 3], vec![0.0; 3]);
        for t in 1..=5 {
            opt.minimize(&loss_of(&w)).unwrap();
            let mut g = grad_at(&host);
            for i in 0..3 {
                if decoupled {
                    host[i] -= 0.05 * 0.2 * host[i];
                } else {
                    g[i] += 0.2 * host[i];
                }
                m[i] = 0.8 * m[i] + 0.2 * g[i];
                v[i] = 0.95 * v[i] + 0.05 * g[i] * g[i];
                let mhat = m[i] / (1.0 - 0.8f64.powi(t));
                let vhat = v[i] / (1.0 - 0.95f64.powi(t));
                host[i] -= 0.05 * mhat / (vhat.sqrt() + 1e-6);
            }
            assert_close(
                &w.to_vec::<f32>().unwrap(),
                &host,
                &format!("decoupled {decoupled}, step {t}"),
            );
        }
    }
}

#[test]
fn backward_then_step_matches_minimize() {
    let a = Tensor::from_slice(&W0);
    let b = Tensor::from_slice(&W0).requires_grad(true).unwrap();
    let opts = SgdOptions {
        lr: 0.1,
        ..SgdOptions::default()
    };
    let mut opt_a = Sgd::new(std::slice::from_ref(&a), opts).unwrap();
    let mut opt_b = Sgd::new(std::slice::from_ref(&b), opts).unwrap();
    for _ in 0..3 {
        opt_a.minimize(&loss_of(&a)).unwrap();
        opt_b.zero_grad();
        let loss = loss_of(&b);
        loss.backward().unwrap();
        let realized = opt_b.step_with(&[&loss]).unwrap();
        assert_eq!(realized.len(), 1);
    }
    assert_eq!(a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
}

#[test]
fn set_lr_changes_the_step() {
    let w = Tensor::from_slice(&[1.0f32]);
    let mut opt = Sgd::new(std::slice::from_ref(&w), SgdOptions::default()).unwrap();
    opt.set_lr(0.25).unwrap();
    assert_eq!(opt.lr(), 0.25);
    opt.minimize(&w.mul(&w).unwrap().sum(None, false).unwrap())
        .unwrap();
    assert_eq!(w.to_vec::<f32>().unwrap(), [0.5]);
    let e = opt.set_lr(f64::NAN).unwrap_err();
    assert!(e.to_string().contains("lr = NaN"), "{e}");
}

#[test]
fn bad_optimizer_input_is_an_error() {
    let w = Tensor::from_slice(&W0);
    let lazy = w.add(1.0).unwrap();
    let e = Sgd::new(&[lazy], SgdOptions::default()).err().unwrap();
    assert_eq!(e.op(), "sgd");
    assert!(e.to_string().contains("not a realized tensor"), "{e}");
    assert!(e.location().file().ends_with("optim.rs"), "{e}");
    let ints = Tensor::from_slice(&[1i32, 2]);
    let e = Adam::new(&[ints], AdamOptions::default()).err().unwrap();
    assert!(e.to_string().contains("is i32"), "{e}");
    let e = Adam::new(&[w.clone(), w.clone()], AdamOptions::default())
        .err()
        .unwrap();
    assert!(e.to_string().contains("given twice"), "{e}");
    let bad = SgdOptions {
        momentum: 1.5,
        ..SgdOptions::default()
    };
    let e = Sgd::new(std::slice::from_ref(&w), bad).err().unwrap();
    assert!(e.to_string().contains("momentum = 1.5"), "{e}");
    let mut opt = Sgd::new(std::slice::from_ref(&w), SgdOptions::default()).unwrap();
    let e = opt.step().unwrap_err();
    assert!(e.to_string().contains("has no gradient"), "{e}");
    let e = opt.updates(&[Tensor::from_slice(&[1.0f32])]).unwrap_err();
    assert!(
        e.to_string()
            .contains("gradient 0 is [1] f32 but its parameter is [3] f32"),
        "{e}"
    );
}
