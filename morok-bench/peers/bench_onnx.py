"""W10: ONNX models on ONNX Runtime (CPU, default session options), the
files `export_models.py` wrote into $MOROK_BENCH_MODELS (morok-bench
exports them before it runs W10):

  W10a ResNet-50, batch 1;  W10b ResNet-50, batch 8;
  W10c transformer encoder (4 layers, d_model 256), batch 8, sequence 128.

Each run feeds Morok's input file and compares the output with PyTorch's
(rtol 1e-3 of the output's largest magnitude). The first call is the
session's creation plus one run; warm calls are timed with the shared
scripts' `bench` rule (3 warm-up calls, then calls for 2.5 s, the median).

Usage (from shared/bench/python, so `common` imports):
  ONLY=W10a,W10c MOROK_BENCH_MODELS=DIR python <this file> results.jsonl
"""
import json, os, sys, time
import numpy as np

sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import bench  # noqa: E402
from export_models import WORKLOADS  # noqa: E402
from peer_main import run_peers  # noqa: E402

DIR = os.environ.get("MOROK_BENCH_MODELS", "")
ONLY = [w for w in os.environ.get("ONLY", "").split(",") if w]


def emit(out, wid, res, first_ms=None, ok=None):
    rec = {"fw": "onnxruntime", "variant": "cpu", "workload": wid, **res, "first_call_ms": first_ms}
    if ok is not None:
        rec["correct"] = bool(ok)
    line = json.dumps(rec)
    print(line, flush=True)
    with open(out, "a") as fh:
        fh.write(line + "\n")


def load(wid, kind, shape):
    return np.fromfile(os.path.join(DIR, f"{wid}.{kind}.f32"), dtype="<f4").reshape(shape)


def onnxruntime_peer(out):
    import onnxruntime as ort

    for wid, (file, shape) in WORKLOADS.items():
        if ONLY and wid not in ONLY:
            continue
        try:
            x = load(wid, "input", shape)
            want = np.fromfile(os.path.join(DIR, f"{wid}.expected.f32"), dtype="<f4")
            t = time.perf_counter()
            session = ort.InferenceSession(os.path.join(DIR, file), providers=["CPUExecutionProvider"])
            y = session.run(None, {"x": x})[0]
            first = (time.perf_counter() - t) * 1e3
            ok = y.size == want.size and np.max(np.abs(y.ravel() - want)) <= 1e-3 * max(1.0, np.max(np.abs(want)))
            res = bench(lambda: session.run(None, {"x": x}), lambda r: None)
            emit(out, wid, res, first, ok)
        except Exception as e:  # one model's failure is a line, not the end
            emit(out, wid, {"error": repr(e)[:300]})


if __name__ == "__main__":
    run_peers(sys.argv[1], [onnxruntime_peer])
