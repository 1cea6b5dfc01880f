"""W1-W7 on an NVIDIA GPU in PyTorch: eager and torch.compile (inductor,
dynamic=False), float32, the shared scripts' inputs (`common.make_inputs`)
moved to GPU 0 once. A call is timed from its inputs on the GPU to its
output on the GPU, `torch.cuda.synchronize()` after each (morok-bench
waits for Morok's device the same way, `MOROK_DEVICE=CUDA`), with the
shared scripts' `bench` rule (3 warm-up calls, then calls for 2.5 s, the
median); the first output is copied back and checked against the shared
float64 reference. Matmuls use full float32 (TF32 off), as Morok does.

Usage (from shared/bench/python, so `common` imports):
  ONLY=W1,W4a python <this file> results.jsonl
Without CUDA (no GPU, or a CPU build of PyTorch) it writes nothing and
says why on stderr."""
import os
import sys
import tempfile

if not os.environ.get("TORCH_KEEP_CACHE"):
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor_cuda_")

sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import bench, check, emit, make_inputs, reference, selected, timed_first  # noqa: E402
from peer_main import run_peers  # noqa: E402

MODES = os.environ.get("TORCH_MODES", "eager,compile").split(",")


def torch_cuda(out):
    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        raise RuntimeError("PyTorch has no CUDA device here (no GPU, or a CPU build)")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda:0")
    print("torch", torch.__version__, "on", torch.cuda.get_device_name(dev), flush=True)
    d = make_inputs()
    t = {k: torch.from_numpy(v.copy()).to(dev) for k, v in d.items()}
    sync = lambda _r: torch.cuda.synchronize(dev)

    def mlp(x, w1, b1, w2, b2):
        return torch.softmax(torch.relu(x @ w1 + b1) @ w2 + b2, -1)

    graphs = {
        "W1_ew_relu_fma_16M": (lambda a, b, c: torch.relu(a * b + c), ("a", "b", "c")),
        "W2a_rowsum_axis1": (lambda x: x.sum(1), ("x",)),
        "W2b_colsum_axis0": (lambda x: x.sum(0), ("x",)),
        "W2c_sum_all": (lambda x: x.sum(), ("x",)),
        "W3_softmax_4096x4096": (lambda x: torch.softmax(x, -1), ("x",)),
        "W4a_matmul_1024": (lambda a, b: a @ b, ("m1a", "m1b")),
        "W4b_matmul_2048": (lambda a, b: a @ b, ("m2a", "m2b")),
        "W5a_mlp_b64": (mlp, ("xb64", "w1", "b1", "w2", "b2")),
        "W5b_mlp_b1024": (mlp, ("xb1024", "w1", "b1", "w2", "b2")),
        "W6_conv3x3_b8_64c_56": (lambda x, w: F.conv2d(x, w, padding=1), ("cx", "cw")),
        "W7_layernorm_4096x1024": (
            lambda x, g, b: F.layer_norm(x, (x.shape[-1],), g, b, 1e-5),
            ("lx", "lg", "lb"),
        ),
    }
    with torch.inference_mode():
        for name in selected():
            if name not in graphs:
                continue
            g, keys = graphs[name]
            args = [t[k] for k in keys]
            ref = reference(name, d)
            variants = []
            if "eager" in MODES:
                variants.append(("eager", g))
            if "compile" in MODES:
                torch._dynamo.reset()
                variants.append(("compile(inductor)", torch.compile(g, dynamic=False)))
            for variant, f in variants:
                try:
                    fn = lambda: f(*args)
                    first, r = timed_first(fn, sync)
                    ok = check(name, r.float().cpu().numpy(), ref)
                    emit(out, "torch-cuda", variant, name, bench(fn, sync), first, ok)
                except Exception as e:  # one variant failing leaves the others
                    emit(out, "torch-cuda", variant, name, {"error": repr(e)[:300]})


if __name__ == "__main__":
    run_peers(sys.argv[1], [torch_cuda])
