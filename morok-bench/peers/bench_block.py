"""W11: one pre-norm transformer encoder layer, float32, batch 8, sequence
512, width 512, 8 heads, MLP 4x with GELU (erf), causal self-attention:

    h = x + (softmax(q k^T / sqrt(64) + causal) v) Wo + bo,  q, k, v from
        layernorm1(x) Wqkv + bqkv
    y = h + gelu(layernorm2(h) W1 + b1) W2 + b2

in PyTorch (eager and torch.compile, both through
F.scaled_dot_product_attention), JAX (jit) and tinygrad (TinyJit). The
inputs are Morok's bench inputs (xorshift values in [-1, 1), the weights
scaled by 1/sqrt(fan-in)), so the first output is compared with a float64
NumPy evaluation at the positions Morok's own check uses. A call is timed
from its inputs to the realized output with the shared scripts' `bench`
rule (3 warm-up calls, then calls for 2.5 s, the median).

Usage (from shared/bench/python, so `common` imports):
  ONLY=W11 python <this file> results.jsonl
Each framework that is not installed is skipped with a line on stderr."""
import json, math, os, sys
import numpy as np

sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import bench, timed_first  # noqa: E402
from peer_main import data, run_peers  # noqa: E402

B, L, D, H = 8, 512, 512, 8
DH, HID, EPS = D // H, 4 * D, 1e-5
NAME = "W11_encoder_block_b8_l512_d512"
FLOPS = 2 * B * L * D * 3 * D + 2 * 2 * B * L * L * D + 2 * B * L * D * D + 2 * 2 * B * L * D * HID


def inputs():
    """x, ln1 gain/bias, Wqkv, bqkv, Wo, bo, ln2 gain/bias, W1, b1, W2, b2
    (seeds 1.., as morok-bench's `block.rs`)."""
    shapes = [(B, L, D), (D,), (D,), (D, 3 * D), (3 * D,), (D, D), (D,), (D,), (D,),
              (D, HID), (HID,), (HID, D), (D,)]
    scale = [1.0, 0.1, 0.1, 1 / math.sqrt(D), 0.1, 1 / math.sqrt(D), 0.1, 0.1, 0.1,
             1 / math.sqrt(D), 0.1, 1 / math.sqrt(HID), 0.1]
    shift = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    out = []
    for k, (s, a, c) in enumerate(zip(shapes, scale, shift)):
        v = data(int(np.prod(s)), k + 1) * np.float32(a) + np.float32(c)
        out.append(v.reshape(s))
    return out


T = inputs()


def erf64(x):
    return np.vectorize(math.erf)(x)


def reference_rows(rows):
    """float64 output rows (b, l) of the block."""
    x, g1, c1, wqkv, bqkv, wo, bo, g2, c2, w1, b1, w2, b2 = [t.astype(np.float64) for t in T]

    def ln(v, g, c):
        mu = v.mean(-1, keepdims=True)
        var = ((v - mu) ** 2).mean(-1, keepdims=True)
        return (v - mu) / np.sqrt(var + EPS) * g + c
    out = {}
    for b, l in rows:
        qkv = ln(x[b, : l + 1], g1, c1) @ wqkv + bqkv
        q, k, v = qkv[:, :D], qkv[:, D:2 * D], qkv[:, 2 * D:]
        heads = []
        for h in range(H):
            sl = slice(h * DH, (h + 1) * DH)
            s = k[:, sl] @ q[l, sl] / math.sqrt(DH)
            p = np.exp(s - s.max())
            heads.append((p / p.sum()) @ v[:, sl])
        hrow = x[b, l] + np.concatenate(heads) @ wo + bo
        z = ln(hrow, g2, c2) @ w1 + b1
        out[(b, l)] = hrow + (0.5 * z * (1 + erf64(z / math.sqrt(2)))) @ w2 + b2
    return out


ROWS = [(0, 0), (0, L - 1), (B - 1, L // 2), (B - 1, L - 1)]
REF = reference_rows(ROWS)


def correct(y):
    y = np.asarray(y, dtype=np.float64).reshape(B, L, D)
    return all(np.max(np.abs(y[b, l] - r)) <= 1e-3 * max(1.0, np.max(np.abs(r))) for (b, l), r in REF.items())


def emit(out, fw, variant, res, first_ms=None, ok=None):
    rec = {"fw": fw, "variant": variant, "workload": NAME, **res, "first_call_ms": first_ms}
    if ok is not None:
        rec["correct"] = bool(ok)
    if "median_ms" in res:
        rec["GFLOP/s"] = round(FLOPS / (res["median_ms"] / 1e3) / 1e9, 2)
    line = json.dumps(rec)
    print(line, flush=True)
    with open(out, "a") as fh:
        fh.write(line + "\n")


def run(out, fw, variant, make):
    """make() -> (call, sync, to_numpy)."""
    try:
        call, sync, to_numpy = make()
        first, r = timed_first(call, sync)
        ok = correct(to_numpy(r))
        emit(out, fw, variant, bench(call, sync), first, ok)
    except Exception as e:  # a framework's failure is a line, not the end
        emit(out, fw, variant, {"error": repr(e)[:300]})


def torch_peer(out):
    import torch
    import torch.nn.functional as F

    def make(compiled):
        def build():
            x, g1, c1, wqkv, bqkv, wo, bo, g2, c2, w1, b1, w2, b2 = [torch.tensor(t) for t in T]

            @torch.no_grad()
            def block():
                qkv = F.layer_norm(x, (D,), g1, c1, EPS) @ wqkv + bqkv
                q, k, v = qkv.view(B, L, 3, H, DH).permute(2, 0, 3, 1, 4)
                a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                h = x + a.transpose(1, 2).reshape(B, L, D) @ wo + bo
                return h + F.gelu(F.layer_norm(h, (D,), g2, c2, EPS) @ w1 + b1) @ w2 + b2

            fn = torch.compile(block) if compiled else block
            return fn, (lambda r: None), (lambda r: r.numpy())
        return build

    run(out, "torch", "eager", make(False))
    run(out, "torch", "compile", make(True))


def jax_peer(out):
    import jax
    import jax.numpy as jnp

    def ln(v, g, c):
        mu = v.mean(-1, keepdims=True)
        var = ((v - mu) ** 2).mean(-1, keepdims=True)
        return (v - mu) * jax.lax.rsqrt(var + EPS) * g + c

    @jax.jit
    def block(x, g1, c1, wqkv, bqkv, wo, bo, g2, c2, w1, b1, w2, b2):
        qkv = ln(x, g1, c1) @ wqkv + bqkv
        q, k, v = qkv.reshape(B, L, 3, H, DH).transpose(2, 0, 3, 1, 4)
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(DH)
        s = jnp.where(jnp.tril(jnp.ones((L, L), bool)), s, -jnp.inf)
        a = jax.nn.softmax(s, axis=-1) @ v
        h = x + a.transpose(0, 2, 1, 3).reshape(B, L, D) @ wo + bo
        return h + jax.nn.gelu(ln(h, g2, c2) @ w1 + b1, approximate=False) @ w2 + b2

    def build():
        args = [jnp.asarray(t) for t in T]
        return (lambda: block(*args)), (lambda r: r.block_until_ready()), (lambda r: np.asarray(r))

    run(out, "jax", "jit", build)


def tinygrad_peer(out):
    from tinygrad import Tensor, TinyJit, Device
    dev = Device[Device.DEFAULT]

    def gelu(z):
        """GELU with erf (tinygrad's `gelu` is the tanh form): erf by
        Abramowitz-Stegun 7.1.26, error below 1.5e-7."""
        u = z * (1 / math.sqrt(2))
        a = u.abs()
        t = 1 / (1 + 0.3275911 * a)
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
        erf = u.sign() * (1 - poly * (-(a * a)).exp())
        return 0.5 * z * (1 + erf)

    def build():
        x, g1, c1, wqkv, bqkv, wo, bo, g2, c2, w1, b1, w2, b2 = [Tensor(t).realize() for t in T]

        @TinyJit
        def block():
            qkv = x.layernorm(eps=EPS) * g1 + c1
            qkv = qkv @ wqkv + bqkv
            q, k, v = [qkv.reshape(B, L, 3, H, DH)[:, :, i].permute(0, 2, 1, 3) for i in range(3)]
            a = q.scaled_dot_product_attention(k, v, is_causal=True)
            h = x + a.permute(0, 2, 1, 3).reshape(B, L, D) @ wo + bo
            m = gelu((h.layernorm(eps=EPS) * g2 + c2) @ w1 + b1)
            return (h + m @ w2 + b2).realize()
        return block, (lambda r: dev.synchronize()), (lambda r: r.numpy())

    run(out, "tinygrad", "TinyJit", build)


if __name__ == "__main__":
    out = sys.argv[1]
    only = os.environ.get("ONLY")
    if only and not any(p in ("W11", NAME) for p in only.split(",")):
        sys.exit(0)
    run_peers(out, (torch_peer, jax_peer, tinygrad_peer))
