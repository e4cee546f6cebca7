"""``vehicledata emulator``: run the local emulator in the foreground."""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "emulator", help="run the local emulator of the Vehicle Data Service",
        description="Run the emulator in the foreground. Its first stdout line is 'listening on http://HOST:PORT'. "
                    "Without --db the dataset is built on first use (vehicledata.dataset.ensure_database).")
    # Defaults (None) are the emulator's own: `--print-defaults` shows them.
    p.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="0 picks a free port (default)")
    p.add_argument("--db", default=None, help="database path (default: the built dataset)")
    p.add_argument("--accounts", default=None, help="JSON file: a list of accounts (default: the demo accounts)")
    p.add_argument("--rate-limit", type=int, default=None, help="requests per window per account or address")
    p.add_argument("--login-rate-limit", type=int, default=None, help="logins per window per address")
    p.add_argument("--token-ttl", type=int, default=None, help="JWT lifetime in seconds")
    p.add_argument("--threads", type=int, default=None, help="worker threads (each busy with one complete request at a time)")
    p.add_argument("--window-seconds", type=int, default=None, help="rate-limit window length")
    p.add_argument("--jwt-secret", default=None, help="JWT signing secret (default: random per process)")
    p.add_argument("--control-token", default=None,
                   help="require this X-Emulator-Token on /_emulator/ requests (default: loopback clients only)")
    p.add_argument("--print-defaults", action="store_true",
                   help="print the emulator's option defaults and demo accounts as JSON and exit")
    p.add_argument("--maintenance", action="store_true", help="start in maintenance mode (503)")
    p.add_argument("--deprecated-403", action="store_true",
                   help="deprecated paths answer 403 DeprecatedException, as the live service may")
    p.add_argument("--log", action="store_true", help="log every request on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .emulator import build_args, find_executable

    exe = find_executable()
    if args.print_defaults:
        argv = [exe, "--print-defaults"]
        sys.stdout.flush()
        return subprocess.call(argv)
    db = args.db
    if db is None:
        from vehicledata import dataset

        db = str(dataset.ensure_database())
    argv = [exe] + build_args(host=args.host, port=args.port, db=db, accounts=args.accounts,
                              rate_limit=args.rate_limit, login_rate_limit=args.login_rate_limit,
                              token_ttl=args.token_ttl, threads=args.threads, jwt_secret=args.jwt_secret,
                              maintenance=args.maintenance, window_seconds=args.window_seconds, log=args.log,
                              deprecated_403=args.deprecated_403, control_token=args.control_token)
    sys.stdout.flush()
    if hasattr(os, "execv"):
        os.execv(exe, argv)  # the emulator takes over the process: signals reach it directly
    proc = subprocess.Popen(argv)  # pragma: no cover - platforms without exec
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        return proc.wait()
