"""The `vehicledata` command.

Subcommands live beside the code they drive; each module exposes
``register(subparsers)`` which adds its parsers with a ``func`` default.
"""
from __future__ import annotations

import argparse
import importlib
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


def _show_warning(message: Warning | str, category: type) -> None:
    """A warning of vehicledata (DemoDataWarning...) as one line for people: no Python file and line."""
    print(f"vehicledata: {category.__name__}: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
