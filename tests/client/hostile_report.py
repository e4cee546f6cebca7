"""Print the hostile-server table of docs/reliability.md: each streaming attack of
test_client_hostile.py, the error the client ended it with, its seconds and peak RSS growth.

    .venv/bin/python tests/client/hostile_report.py
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from hostile_server import hostile_server  # noqa: E402
from test_client_hostile import STREAMING, run_child  # noqa: E402


def main() -> int:
    print("| attack | client options | error (limit) | seconds | peak RSS growth MiB | bound s / MiB |")
    print("|---|---|---|---|---|---|")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for attack, action, opts, error, limit, seconds, mib in STREAMING:
            with hostile_server() as server:
                out = run_child(f"{server.url}/{attack}", action, opts, Path(tmp))
            ok = ((out["error"] == error and out["limit"] == limit) if error else out["error"] == "LimitError") and \
                out["seconds"] < seconds and out["grew_mib"] < mib
            failed += not ok
            shown = ", ".join(f"{k}={v}" for k, v in opts.items()) or "defaults"
            print(f"| {attack} ({action}) | {shown} | {out['error']} ({out['limit'] or '-'}) | {out['seconds']:.2f} | "
                  f"{out['grew_mib']:.1f} | {seconds} / {mib}{'' if ok else ' FAILED'} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
