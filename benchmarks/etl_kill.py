"""A nightly job killed at any second: how many pages its re-run fetches again (issue 40 item 3).

Not a scenario and never a pass/fail test (run it by hand): a child process runs the nightly call
``api.trims.search().to_parquet(dir, partition_cols=["make"], page_size=P)`` with the client's
defaults (rate limit 600 requests a minute, ``rows_per_file`` and ``checkpoint_pages`` at their
defaults) against an emulator; it is sent SIGKILL after ``--at`` seconds, then the same call runs
again to the end.  Prints, per kill time, the pages of the search, the requests of the killed job
and of the re-run (the emulator's counter and the re-run client's), and the pages fetched twice.

    VEHICLEDATA_HOME=$PWD/build/home .venv/bin/python benchmarks/etl_kill.py [--at 2 5 10 20 40]
        [--page-size 100]

Target (issue 40, Measured): a kill at any second refetches at most one minute of pages.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import vehicledata as vd
from vehicledata import checkpoint
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

PREMIUM = DEMO_ACCOUNTS["premium"]
_JOB = """
import sys
import vehicledata as vd
with vd.Client(base_url=sys.argv[1], api_token=sys.argv[2], api_secret=sys.argv[3]) as api:
    api.trims.search().to_parquet(sys.argv[4], partition_cols=["make"], page_size=int(sys.argv[5]))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--at", type=float, nargs="+", default=[2, 5, 10, 20, 40])
    ap.add_argument("--page-size", type=int, default=100)
    args = ap.parse_args()
    print(f"checkpoint_pages={getattr(checkpoint, 'CHECKPOINT_PAGES', None)}, "
          f"CHECKPOINT_SECONDS={getattr(checkpoint, 'CHECKPOINT_SECONDS', None)}, "
          f"page_size={args.page_size}, client rate limit 600/min")
    print("kill at s | pages | killed job's requests | pages_done at kill | re-run requests | fetched twice")
    for at in args.at:
        with tempfile.TemporaryDirectory() as tmp, Emulator(rate_limit=1_000_000) as emu:
            script, target = Path(tmp) / "job.py", Path(tmp) / "trims"
            script.write_text(_JOB)
            proc = subprocess.Popen([sys.executable, str(script), emu.url, PREMIUM["api_token"],
                                     PREMIUM["api_secret"], str(target), str(args.page_size)],
                                    env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
            time.sleep(at)
            if proc.poll() is not None:
                print(f"{at:9g} | the job finished before the kill")
                continue
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            time.sleep(0.5)  # the killed job's last requests land in the emulator's counter
            killed = emu.stats()["by_path"].get("/api/trims/v2", 0)
            ckpt = target / checkpoint.CHECKPOINT_NAME
            done = json.loads(ckpt.read_text())["pages_done"] if ckpt.exists() else 0  # none yet: nothing kept
            with vd.Client(base_url=emu.url, api_token=PREMIUM["api_token"], api_secret=PREMIUM["api_secret"],
                           rate_limit=None) as api:
                api.makes.search().total  # logged in
                sent = api.stats()["requests"]
                api.trims.search().to_parquet(target, partition_cols=["make"], page_size=args.page_size)
                rerun = api.stats()["requests"] - sent
            pages = json.loads(ckpt.read_text())["pages"]
            print(f"{at:9g} | {pages} | {killed} | {done} | {rerun} | {killed + rerun - pages}")


if __name__ == "__main__":
    main()
