#!/usr/bin/env python3
"""Run every benchmark in turn (`make bench`). Measurements only: nothing here passes or fails."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = ["client_decode.py", "client_crawl.py", "client_ratelimit.py", "emulator_wrk.py"]


def main() -> int:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    failed = []
    for name in BENCHMARKS:
        print(f"==> {name}", flush=True)
        rc = subprocess.call([sys.executable, str(HERE / name)], env=env)
        if rc != 0:
            failed.append(name)
    if failed:
        print(f"benchmarks that did not complete: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
