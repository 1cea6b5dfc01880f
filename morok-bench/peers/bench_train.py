"""W8 / W9: one training step of the MLP 784-128-10 (relu, batch 128,
cross-entropy against integer labels) with SGD (W8, lr 0.01) or Adam (W9,
lr 0.001, PyTorch's other defaults), in PyTorch (eager and torch.compile),
JAX (jit of value_and_grad and the update, parameters donated) and
tinygrad (TinyJit, parameters marked with `is_param_`). A step is timed from its inputs to the realized loss
and updated parameters, with the shared scripts' `bench` rule (3 warm-up
steps, then steps for 2.5 s, 10 to 2000 of them, the median).

Usage (from shared/bench/python, so `common` imports):
  ONLY=W8,W9 python <this file> results.jsonl
Each framework that is not installed is skipped with a line on stderr.
The first step's loss is checked against a float64 NumPy evaluation."""
import json, os, sys, time
import numpy as np

sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import bench, timed_first  # noqa: E402
from peer_main import run_peers  # noqa: E402

B, IN, H, OUT = 128, 784, 128, 10
WORK = {
    "W8_train_sgd_mlp_b128": ("sgd", 0.01),
    "W9_train_adam_mlp_b128": ("adam", 0.001),
}
FLOPS = 6 * B * (IN * H + H * OUT)

rng = np.random.default_rng(0)
f = lambda *s: rng.standard_normal(s, dtype=np.float32)
X = f(B, IN)
W1, B1 = f(IN, H) * np.float32(0.05), f(H) * np.float32(0.1)
W2, B2 = f(H, OUT) * np.float32(0.1), f(OUT) * np.float32(0.1)
Y = ((np.arange(B) * 7 + 3) % OUT).astype(np.int64)


def reference_loss():
    h = np.maximum(X.astype(np.float64) @ W1 + B1, 0)
    z = h @ W2 + B2
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-logp[np.arange(B), Y].mean())


REF = reference_loss()


def emit(out, fw, variant, name, res, first_ms=None, loss=None):
    rec = {"fw": fw, "variant": variant, "workload": name, **res, "first_call_ms": first_ms}
    if loss is not None:
        rec["correct"] = bool(abs(loss - REF) <= 1e-3 * max(1.0, abs(REF)))
        rec["first_loss"] = loss
    if "median_ms" in res:
        rec["GFLOP/s"] = round(FLOPS / (res["median_ms"] / 1e3) / 1e9, 2)
    line = json.dumps(rec)
    print(line, flush=True)
    with open(out, "a") as fh:
        fh.write(line + "\n")


def selected():
    only = os.environ.get("ONLY")
    return [k for k in WORK if not only or any(k.startswith(p) for p in only.split(","))]


def run(out, fw, variant, name, make):
    """make() -> (step, sync, loss_of): a fresh model and optimizer."""
    try:
        step, sync, loss_of = make()
        first, r = timed_first(step, sync)
        loss = loss_of(r)
        emit(out, fw, variant, name, bench(step, sync), first, loss)
    except Exception as e:  # a framework's failure is a line, not the end
        emit(out, fw, variant, name, {"error": repr(e)[:300]})


def torch_peer(out):
    import torch
    import torch.nn.functional as F

    def make(kind, lr, compiled):
        def build():
            p = [torch.tensor(a, requires_grad=True) for a in (W1, B1, W2, B2)]
            x, y = torch.tensor(X), torch.tensor(Y)
            opt = torch.optim.SGD(p, lr=lr) if kind == "sgd" else torch.optim.Adam(p, lr=lr)

            def step():
                opt.zero_grad(set_to_none=True)
                loss = F.cross_entropy(torch.relu(x @ p[0] + p[1]) @ p[2] + p[3], y)
                loss.backward()
                opt.step()
                return loss.detach()

            fn = torch.compile(step) if compiled else step
            return fn, (lambda r: None), (lambda r: float(r))
        return build

    for name in selected():
        kind, lr = WORK[name]
        run(out, "torch", "eager", name, make(kind, lr, False))
        run(out, "torch", "compile", name, make(kind, lr, True))


def jax_peer(out):
    import jax
    import jax.numpy as jnp

    def loss_fn(p, x, y):
        z = jnp.maximum(x @ p[0] + p[1], 0) @ p[2] + p[3]
        logp = jax.nn.log_softmax(z, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    def make(kind, lr):
        def build():
            x, y = jnp.asarray(X), jnp.asarray(Y.astype(np.int32))
            state = {"p": [jnp.asarray(a) for a in (W1, B1, W2, B2)]}
            if kind == "sgd":
                def upd(p, x, y):
                    loss, g = jax.value_and_grad(loss_fn)(p, x, y)
                    return [a - lr * b for a, b in zip(p, g)], loss
                upd = jax.jit(upd, donate_argnums=(0,))

                def step():
                    state["p"], loss = upd(state["p"], x, y)
                    return loss
            else:
                b1, b2, eps = 0.9, 0.999, 1e-8
                state["m"] = [jnp.zeros_like(a) for a in state["p"]]
                state["v"] = [jnp.zeros_like(a) for a in state["p"]]
                state["t"] = jnp.zeros((), jnp.float32)

                def upd(p, m, v, t, x, y):
                    loss, g = jax.value_and_grad(loss_fn)(p, x, y)
                    t = t + 1
                    m = [b1 * a + (1 - b1) * b for a, b in zip(m, g)]
                    v = [b2 * a + (1 - b2) * b * b for a, b in zip(v, g)]
                    c1, c2 = 1 - b1 ** t, 1 - b2 ** t
                    p = [a - lr * (mm / c1) / (jnp.sqrt(vv / c2) + eps) for a, mm, vv in zip(p, m, v)]
                    return p, m, v, t, loss
                upd = jax.jit(upd, donate_argnums=(0, 1, 2, 3))

                def step():
                    state["p"], state["m"], state["v"], state["t"], loss = upd(
                        state["p"], state["m"], state["v"], state["t"], x, y)
                    return loss
            return step, (lambda r: r.block_until_ready()), (lambda r: float(r))
        return build

    for name in selected():
        kind, lr = WORK[name]
        run(out, "jax", "jit", name, make(kind, lr))


def tinygrad_peer(out):
    from tinygrad import Tensor, TinyJit, Device
    from tinygrad.helpers import Context
    from tinygrad.nn.optim import SGD, Adam
    dev = Device[Device.DEFAULT]

    def make(kind, lr):
        def build():
            p = [Tensor(a).is_param_().realize() for a in (W1, B1, W2, B2)]
            x, y = Tensor(X).realize(), Tensor(Y.astype(np.int32)).realize()
            opt = SGD(p, lr=lr) if kind == "sgd" else Adam(p, lr=lr)

            @TinyJit
            def step_jit():
                with Context(TRAINING=1):
                    opt.zero_grad()
                    loss = ((x @ p[0] + p[1]).relu() @ p[2] + p[3]).sparse_categorical_crossentropy(y)
                    loss.backward()
                    return loss.realize(*opt.schedule_step())
            return step_jit, (lambda r: dev.synchronize()), (lambda r: float(r.numpy()))
        return build

    for name in selected():
        kind, lr = WORK[name]
        run(out, "tinygrad", "TinyJit", name, make(kind, lr))


if __name__ == "__main__":
    out = sys.argv[1]
    run_peers(out, (torch_peer, jax_peer, tinygrad_peer))
