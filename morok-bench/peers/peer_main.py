"""What the project's peer scripts share: the entry loop (each
framework's function runs in turn; one that is not installed, or cannot
start, is a line on stderr and the next one runs) and morok-bench's input
generator."""
import sys

import numpy as np


def data(n, seed):
    """morok-bench's inputs (`workloads::data`): xorshift64 values in [-1, 1)."""
    mask = (1 << 64) - 1
    s = ((seed * 0x9E3779B97F4A7C15) & mask) | 1
    out = np.empty(n, dtype=np.float32)
    for i in range(n):
        s ^= (s << 13) & mask
        s ^= s >> 7
        s ^= (s << 17) & mask
        out[i] = np.float32((s >> 40) / float(1 << 24) * 2.0 - 1.0)
    return out


def run_peers(out, peers):
    """Calls each of `peers` with the results file `out`."""
    for peer in peers:
        try:
            peer(out)
        except ImportError as e:
            print(f"{peer.__name__}: not installed ({e})", file=sys.stderr)
        except Exception as e:  # the framework cannot start: say so, go on
            print(f"{peer.__name__}: {e!r}"[:300], file=sys.stderr)
