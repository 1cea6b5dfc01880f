"""The entry loop the project's peer scripts share: each framework's
function runs in turn; one that is not installed, or cannot start, is a
line on stderr and the next one runs."""
import sys


def run_peers(out, peers):
    """Calls each of `peers` with the results file `out`."""
    for peer in peers:
        try:
            peer(out)
        except ImportError as e:
            print(f"{peer.__name__}: not installed ({e})", file=sys.stderr)
        except Exception as e:  # the framework cannot start: say so, go on
            print(f"{peer.__name__}: {e!r}"[:300], file=sys.stderr)
