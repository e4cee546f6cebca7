"""The `vehicledata` command.

Subcommands live beside the code they drive; each module exposes
``register(subparsers)`` which adds its parsers with a ``func`` default.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from typing import List, Optional

# module -> registers subcommands
_SUBCOMMAND_MODULES = [
    "vehicledata.dataset.cli",     # dataset build
    "vehicledata.testing.cli",     # emulator
    "vehicledata.client_cli",      # get, vin, feed
    "vehicledata.demo",            # demo: the main job end to end
]


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="vehicledata", description="Vehicle reference data: client, emulator, dataset")
    parser.add_argument("--version", action="version", version=f"vehicledata {__version__}")
    parser.add_argument("-v", "--debug", action="store_true",
                        help="show the traceback of an error (also $VEHICLEDATA_DEBUG=1)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _SUBCOMMAND_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        mod.register(sub)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    with warnings.catch_warnings():
        shown = warnings.showwarning
        warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: (
            _show_warning(message, category) if category.__module__.startswith("vehicledata")
            else shown(message, category, filename, lineno, file, line))
        try:
            return int(args.func(args) or 0)
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return 130
        except _expected_errors() as exc:
            if args.debug or os.environ.get("VEHICLEDATA_DEBUG"):
                raise
            print(f"vehicledata {args.command}: {one_line(exc)}", file=sys.stderr)
            return 1


def _expected_errors() -> tuple:
    """What a command's user can cause and fix (no data, a bad path, a port in use, bad
    credentials, a refused query): one line, not a traceback. Anything else is a bug and shows
    its traceback."""
    from .dataset.epa import SourceError
    from .dataset.fetch import FetchError
    from .dataset.store import SchemaMismatch
    from .errors import VehicleDataError
    from .testing.emulator import EmulatorError

    return (VehicleDataError, SourceError, FetchError, SchemaMismatch, EmulatorError, OSError)


def one_line(exc: BaseException, limit: int = 400) -> str:
    """An error as one line: its first line (or its type's name), cut to `limit` characters."""
    text = str(exc).strip()
    if isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    first = text.splitlines()[0].strip() if text else type(exc).__name__
    if len(first) > limit:
        first = first[:limit] + f"... ({len(first):,} characters)"
    extra = " (--debug shows the rest)" if len(text.splitlines()) > 1 else ""
    return first + extra


def _show_warning(message: Warning | str, category: type) -> None:
    """A warning of vehicledata (DemoDataWarning...) as one line for people: no Python file and line."""
    print(f"vehicledata: {category.__name__}: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
