"""``vehicledata emulator``: run the local emulator in the foreground."""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from typing import Any

from .emulator import NUMBER_OPTIONS


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "emulator", help="run the local emulator of the Vehicle Data Service",
        description="Run the emulator in the foreground. Its first stdout line is 'listening on http://HOST:PORT'. "
                    "Without --db the dataset is built on first use (vehicledata.dataset.ensure_database).")
    # Defaults (None) are the emulator's own: `--print-defaults` shows them.
    p.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    p.add_argument("--db", default=None, help="database path (default: the built dataset)")
    p.add_argument("--accounts", default=None, help="JSON file: a list of accounts (default: the demo accounts)")
    for name, meaning in NUMBER_OPTIONS.items():
        p.add_argument("--" + name.replace("_", "-"), dest=name, type=int, default=None, metavar="N", help=meaning)
    p.add_argument("--jwt-secret", default=None, help="JWT signing secret (default: random per process)")
    p.add_argument("--jwt-secret-file", default=None, metavar="FILE", help="read the JWT signing secret from FILE")
    p.add_argument("--control-token", default=None,
                   help="require this X-Emulator-Token on /_emulator/ requests (default: loopback clients only)")
    p.add_argument("--control-token-file", default=None, metavar="FILE", help="read the control token from FILE")
    p.add_argument("--parent-pid", type=int, default=None, metavar="PID",
                   help="exit when that process ends, however it ends")
    p.add_argument("--print-defaults", action="store_true",
                   help="print the emulator's option defaults and demo accounts as JSON and exit")
    p.add_argument("--maintenance", action="store_true", help="start in maintenance mode (503)")
    p.add_argument("--deprecated-403", action="store_true",
                   help="deprecated paths answer 403 DeprecatedException, as the live service may")
    p.add_argument("--log", action="store_true", help="log every request on stderr")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .emulator import build_args, find_executable, secret_env

    exe = find_executable()
    if args.print_defaults:
        argv = [exe, "--print-defaults"]
        sys.stdout.flush()
        return subprocess.call(argv)
    db = args.db
    if db is None:
        from vehicledata import dataset

        db = str(dataset.ensure_database())
    numbers = {name: getattr(args, name) for name in NUMBER_OPTIONS}
    files = [a for flag, path in (("--jwt-secret-file", args.jwt_secret_file),
                                  ("--control-token-file", args.control_token_file)) if path for a in (flag, path)]
    argv = [exe] + build_args(host=args.host, db=db, accounts=args.accounts,
                              maintenance=args.maintenance, log=args.log, deprecated_403=args.deprecated_403,
                              parent_pid=args.parent_pid, extra_args=files, **numbers)
    # the secrets in the environment: the emulator's command line is readable by every local user
    env = secret_env(jwt_secret=args.jwt_secret, control_token=args.control_token)
    sys.stdout.flush()
    if hasattr(os, "execve"):
        os.execve(exe, argv, env)  # the emulator takes over the process: signals reach it directly
    proc = subprocess.Popen(argv, env=env)  # pragma: no cover - platforms without exec
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        return proc.wait()
