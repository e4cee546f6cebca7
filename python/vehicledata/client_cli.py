"""Client subcommands of ``vehicledata``: get, vin, plate, feed, account.

    vehicledata get trims --year 2019 --make BMW [--where JSON] [--format table|csv|json|parquet]
                          [--limit N] [--all] [--output FILE]
    vehicledata get trims --id 9366             # one trim with its bodies, engines, ...
                                                # (table/csv: the trim, then one section per nested array)
    vehicledata vin 1HGCM82633A004352
    vehicledata feed download PATH
    vehicledata feed last-updated
    vehicledata account requests|today

Credentials and URL: --api-token/--api-secret/--base-url or VEHICLEDATA_API_TOKEN,
VEHICLEDATA_API_SECRET, VEHICLEDATA_BASE_URL.  Every resource's filters are
options of its ``get`` subcommand, read from the schema table.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, Iterable, List, Optional, TextIO

from . import schema

# The resources of `get`, from the schema table: the current years, search and
# vehicle-attributes endpoints, in schema order.  CLI name ("exterior-colors") -> client accessor.
_GET_KINDS = (schema.Kind.YEARS, schema.Kind.SEARCH, schema.Kind.ATTRIBUTES)
_RESOURCES = {e.resource.replace("_", "-"): e.resource for e in schema.endpoints().values()
              if e.kind in _GET_KINDS and not e.deprecated}
_FORMATS = ("table", "csv", "json", "parquet")
# CLI name -> the endpoint's path
_PATHS = {e.resource.replace("_", "-"): e.path for e in schema.endpoints().values()
          if e.kind in _GET_KINDS and not e.deprecated}


def _connection_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("connection")
    g.add_argument("--base-url", help="service URL (env VEHICLEDATA_BASE_URL, default https://carapi.app)")
    g.add_argument("--api-token", help="API token (env VEHICLEDATA_API_TOKEN)")
    g.add_argument("--api-secret", help="API secret (env VEHICLEDATA_API_SECRET)")
    g.add_argument("--timeout", type=float, default=60.0, help="seconds per request (default 60)")
    g.add_argument("--no-rate-limit", action="store_true", help="disable the client-side rate limit")


def _output_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=_FORMATS, default="table", help="output format (default table)")
    p.add_argument("--columns", help="only these columns, comma-separated (e.g. id,year,make,model)")
    p.add_argument("--output", "-o", help="write to this file instead of stdout (required for parquet)")


def _sort_key(ep: schema.Endpoint) -> Any:
    """argparse ``type=`` of ``--sort``: a short name (``msrp``) or a full key (``MakeModelTrims.msrp``),
    resolved as ``search(sort=)`` does (``_values.resolve_sort``); else a usage error with the hint."""
    def parse(value: str) -> str:
        from ._values import resolve_sort
        from .errors import QueryError

        try:
            return resolve_sort(ep, value)
        except QueryError as exc:
            raise argparse.ArgumentTypeError(exc.message) from None

    return parse


def _filter_value(kind: str) -> Any:
    """argparse ``type=`` of a filter option: the number a filter typed ``int`` or ``float`` takes
    (``_values.filter_types``, what ``search()`` checks), else a usage error; other filters: the text."""
    if kind not in ("int", "float"):
        return None

    def parse(text: str) -> Any:
        try:
            return int(text) if kind == "int" else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"takes {'an integer' if kind == 'int' else 'a number'}, "
                                             f"not {text!r}") from None

    return parse


def register(subparsers: Any) -> None:
    get = subparsers.add_parser("get", help="query a resource of the service",
                                description="Query a resource; filters are the endpoint's (schema table).")
    res = get.add_subparsers(dest="resource", metavar="RESOURCE")
    for name, path in _PATHS.items():
        ep = schema.endpoint(path)
        p = res.add_parser(name, help=f"{ep.category}: {path}")
        fg = p.add_argument_group("filters")
        from ._values import filter_types

        types = filter_types(ep)
        for fname, match in ep.filters:
            fg.add_argument(f"--{fname.replace('_', '-')}", dest=f"f_{fname}", type=_filter_value(types[fname]),
                            metavar="LIKE" if match == "like" else types[fname].upper() if types[fname] in ("int", "float")
                            else "VALUE", help=f"{match} filter {fname}")
        if ep.json_fields:
            p.add_argument("--where", help="conditions as JSON: [{\"field\":..,\"op\":..,\"val\":..}]")
        if ep.sort_keys:
            shorts = sorted({k.rpartition(".")[2] for k in ep.sort_keys})
            p.add_argument("--sort", type=_sort_key(ep), metavar="KEY",
                           help=f"sort key, by its short name ({', '.join(shorts)}) or in full ({ep.sort_keys[0]}, ...)")
            p.add_argument("--direction", choices=["asc", "desc"])
        if ep.paged:
            p.add_argument("--limit", type=_positive_int, help="print at most N records (default: the first page)")
            p.add_argument("--all", action="store_true", help="every page")
            p.add_argument("--page", type=int, default=1, help="start at this page")
            p.add_argument("--page-size", type=int, help="records per request (1..1000)")
        if ep.resource in schema.resources(schema.Kind.DETAIL):
            key = schema.endpoint_for(schema.Kind.DETAIL, ep.resource).parameter
            p.add_argument("--id", dest="detail_id", help=f"fetch one record by its {key}")
        _output_args(p)
        _connection_args(p)
        p.set_defaults(func=_cmd_get, cli_resource=name)

    vin = subparsers.add_parser("vin", help="decode a VIN")
    vin.add_argument("vin")
    vin.add_argument("--verbose", action="store_true", help="add body, engine and mileage")
    vin.add_argument("--all-trims", action="store_true", help="every trim of the model")
    vin.add_argument("--format", choices=("json", "table"), default="json")
    _connection_args(vin)
    vin.set_defaults(func=_cmd_vin)

    plate = subparsers.add_parser("plate", help="look up a licence plate")
    plate.add_argument("country_code")
    plate.add_argument("lookup")
    plate.add_argument("--region")
    _connection_args(plate)
    plate.set_defaults(func=_cmd_plate)

    feed = subparsers.add_parser("feed", help="the bulk data feed")
    fs = feed.add_subparsers(dest="feed_command", metavar="ACTION")
    dl = fs.add_parser("download", help="download the feed ZIP (resumable, verified)")
    dl.add_argument("path")
    dl.add_argument("--no-resume", action="store_true", help="start over instead of resuming a partial file")
    dl.add_argument("--progress", action="store_true", default=None, help="show a progress bar")
    _connection_args(dl)
    dl.set_defaults(func=_cmd_feed_download)
    lu = fs.add_parser("last-updated", help="when the feed was last built")
    _connection_args(lu)
    lu.set_defaults(func=_cmd_feed_last_updated)

    acc = subparsers.add_parser("account", help="usage counters")
    acs = acc.add_subparsers(dest="account_command", metavar="ACTION")
    for action in ("requests", "today"):
        a = acs.add_parser(action, help="requests per day" if action == "requests" else "requests today")
        _connection_args(a)
        a.set_defaults(func=_cmd_account, account_action=action)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {value}")
    return value


def _quiet_broken_pipe() -> int:
    """The reader went away (``... | head``): exit quietly with status 0, as Python's docs advise
    (the reader has what it asked for; ``head`` closing the pipe is not a failure)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout without a file descriptor
        pass
    return 0


def _guard(func: Any) -> Any:
    """Print service, usage, value and file errors as one line on stderr (exit status 1), never a traceback."""
    import functools

    @functools.wraps(func)
    def run(args: argparse.Namespace) -> int:
        from .errors import VehicleDataError

        try:
            return int(func(args) or 0)
        except BrokenPipeError:
            return _quiet_broken_pipe()
        except VehicleDataError as exc:
            print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        except OSError as exc:
            where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
            print(f"error: {exc.strerror or exc}{where}", file=sys.stderr)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
        return 1
    return run


def _client(args: argparse.Namespace) -> Any:
    from .client import Client

    return Client(api_token=args.api_token, api_secret=args.api_secret, base_url=args.base_url,
                  timeout=args.timeout, rate_limit=None if args.no_rate_limit else 600)


def _filters(args: argparse.Namespace) -> Dict[str, Any]:
    return {k[2:]: v for k, v in vars(args).items() if k.startswith("f_") and v is not None}


def _open_out(args: argparse.Namespace) -> TextIO:
    if getattr(args, "output", None):
        return open(args.output, "w", encoding="utf-8", newline="")
    return sys.stdout


def _select_columns(df: Any, args: argparse.Namespace) -> Any:
    """``--columns a,b,c``: those columns in that order; an unknown one is an error listing the valid ones."""
    text = getattr(args, "columns", None)
    if not text:
        return df
    wanted = [c.strip() for c in text.split(",") if c.strip()]
    for c in wanted:
        if c not in df.columns:
            from ._values import unknown_name as _unknown

            raise ValueError("--columns: " + _unknown("column", c, [str(x) for x in df.columns], "this output"))
    return df.loc[:, wanted]


def _nothing(name: str, filters: Dict[str, Any], args: argparse.Namespace) -> str:
    """The sentence a table prints for an empty result: ``no trims match year=2019, make=Toyota``."""
    asked = [f"{k}={v}" for k, v in filters.items()]
    if getattr(args, "where", None):
        asked.append(f"where {args.where}")
    page = getattr(args, "page", 1) or 1
    tail = f" on page {page}" if page != 1 else ""
    return f"no {name} match {', '.join(asked)}{tail}" if asked else f"no {name} found{tail}"


def _emit_frame(df: Any, args: argparse.Namespace, empty: Optional[str] = None) -> None:
    """``df`` in the chosen format; an empty table is the sentence ``empty`` (csv, json and parquet
    keep their empty structure, for programs)."""
    df = _select_columns(df, args)
    fmt = args.format
    if fmt == "parquet":
        if not args.output:
            raise SystemExit("--format parquet needs --output FILE")
        df.to_parquet(args.output, index=False)
        return
    out = _open_out(args)
    try:
        if fmt == "csv":
            df.to_csv(out, index=False)
        elif fmt == "json":
            out.write(df.to_json(orient="records", date_format="iso", force_ascii=False, lines=False))
            out.write("\n")
        elif empty is not None and len(df) == 0:
            out.write(empty + "\n")
        else:
            import pandas as pd

            with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
                out.write(df.to_string(index=False) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()


def _records_frame(records: Iterable[Any], record: str) -> Any:
    import pandas as pd

    rows = [_utc(r.to_dict() if hasattr(r, "to_dict") else r) for r in records]
    cols = schema.record(record).field_names()
    cols += [k for row in rows for k in row if k not in cols and not isinstance(row[k], (list, dict))]
    return pd.DataFrame(rows, columns=list(dict.fromkeys(cols)))


def _utc(v: Any) -> Any:
    """Timestamps in UTC (as the search frames print them), recursively."""
    from datetime import datetime, timezone

    if isinstance(v, datetime) and v.tzinfo is not None:
        return v.astimezone(timezone.utc)
    if isinstance(v, dict):
        return {k: _utc(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_utc(x) for x in v]
    return v


def _detail_sections(rec: Any, record: str) -> List[Any]:
    """(title, DataFrame) per section: the record's own columns, then one per nested array."""
    rec_schema = schema.record(record)
    own = [f for f in rec_schema.record_fields() if f.type != "nested"]
    sections = [(record.replace("_detail", ""), _records_frame([{f.name: rec.get(f.name) for f in own}], record).loc[:, [f.name for f in own]])]
    for f in rec_schema.record_fields():
        if f.type == "nested":
            value = rec.get(f.name)
            items = value if isinstance(value, list) else ([value] if value is not None else [])
            sections.append((f.name, _records_frame(items, f.nested)))
    return sections


def _emit_detail(rec: Any, record: str, args: argparse.Namespace) -> None:
    if args.format == "parquet":
        raise SystemExit("--id prints one record with nested arrays: use --format json, table or csv")
    out = _open_out(args)
    try:
        for i, (title, df) in enumerate(_detail_sections(rec, record)):
            if i:
                out.write("\n")
            if args.format == "csv":
                out.write(f"# {title}\n")
                df.to_csv(out, index=False)
            else:
                import pandas as pd

                out.write(f"{title} ({len(df)}):\n")
                with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
                    out.write((df.to_string(index=False) if len(df) else "(none)") + "\n")
    finally:
        if out is not sys.stdout:
            out.close()


def _json_default(o: Any) -> Any:
    from datetime import datetime, timezone

    if isinstance(o, datetime) and o.tzinfo is not None:
        # The style of the search output's JSON (pandas' to_json): UTC, milliseconds, "Z".
        u = o.astimezone(timezone.utc)
        return u.strftime("%Y-%m-%dT%H:%M:%S.") + f"{u.microsecond // 1000:03d}Z"
    if hasattr(o, "isoformat"):
        return o.isoformat()
    if hasattr(o, "to_dict"):
        return o.to_dict()
    raise TypeError(str(type(o)))


def _emit_json(obj: Any, args: Optional[argparse.Namespace] = None) -> None:
    out = _open_out(args) if args is not None else sys.stdout
    try:
        out.write(json.dumps(obj, default=_json_default, indent=2, ensure_ascii=False) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()


@_guard
def _cmd_get(args: argparse.Namespace) -> int:
    import pandas as pd

    name = args.cli_resource
    path = _PATHS[name]
    ep = schema.endpoint(path)
    filters = _filters(args)
    with _client(args) as api:
        accessor = getattr(api, _RESOURCES[name])
        if ep.kind is schema.Kind.ATTRIBUTES:
            if "attribute" not in filters:
                raise SystemExit("vehicle-attributes needs --attribute NAME; one of: " + ", ".join(schema.attributes()))
            df = pd.DataFrame({"value": accessor(filters["attribute"])})
        elif ep.kind is schema.Kind.YEARS:
            df = pd.DataFrame({"year": accessor(where=getattr(args, "where", None), **filters)})
        elif getattr(args, "detail_id", None):
            rec = accessor.get(args.detail_id)
            detail = schema.endpoint(accessor.detail_path)
            if args.format == "json":
                _emit_json(_utc(rec.to_dict()), args)
            else:
                _emit_detail(rec, detail.record, args)
            return 0
        else:
            pager = accessor.search(where=args.where if ep.json_fields else None,
                                    sort=getattr(args, "sort", None), direction=getattr(args, "direction", None),
                                    limit=args.page_size, start_page=args.page, **filters)
            if args.all:
                df = pager.to_pandas()
                if args.limit is not None:
                    df = df.head(args.limit)
            elif args.limit is not None:
                frames: List[Any] = []
                got = 0
                # Pages no larger than what is printed (the bulk default of 1000 would fetch more).
                size = None if args.page_size else min(schema.MAX_LIMIT, args.limit)
                for frame in pager.iter_pandas(page_size=size):
                    frames.append(frame)
                    got += len(frame)
                    if got >= args.limit:
                        break
                df = pd.concat(frames, ignore_index=True).head(args.limit) if frames else pager.to_pandas()
            else:
                page = next(iter(pager.pages))
                df = page.to_pandas()
                if page.total > len(df):
                    _emit_frame(df, args)  # the note follows the output (none if writing it failed)
                    print(f"showing {len(df):,} of {page.total:,}; --all for everything", file=sys.stderr)
                    return 0
        _emit_frame(df, args, _nothing(name, filters, args))
    return 0


@_guard
def _cmd_vin(args: argparse.Namespace) -> int:
    with _client(args) as api:
        rec = api.vin(args.vin, verbose=args.verbose or None, all_trims=args.all_trims or None)
    data = _utc(rec.to_dict())  # timestamps in UTC, as every command prints them
    if args.format == "json":
        _emit_json(data)
    else:
        import pandas as pd

        for k in ("year", "make", "model", "trim"):
            print(f"{k:>6}: {data.get(k)}")
        for k, v in sorted((data.get("specs") or {}).items()):
            if v not in (None, ""):
                print(f"  {k}: {v}")
        trims = data.get("trims") or []
        print(f"\ntrims ({len(trims)}):")
        if trims:
            rows = []
            for t in trims:  # the legacy trim: make and model names from its nested make_model
                mm = t.get("make_model") or {}
                rows.append({"id": t.get("id"), "year": t.get("year"), "make": (mm.get("make") or {}).get("name"),
                             "model": mm.get("name"), "name": t.get("name"), "description": t.get("description"),
                             "msrp": t.get("msrp")})
            with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
                print(pd.DataFrame(rows).to_string(index=False))
        else:
            print("(none)")
    return 0


@_guard
def _cmd_plate(args: argparse.Namespace) -> int:
    with _client(args) as api:
        rec = api.license_plate(args.country_code, args.lookup, region=args.region)
    _emit_json(rec.to_dict())
    return 0


@_guard
def _cmd_feed_download(args: argparse.Namespace) -> int:
    with _client(args) as api:
        path = api.data_feed.download(args.path, resume=not args.no_resume, progress=args.progress)
    print(f"{path} ({path.stat().st_size} bytes)")
    return 0


@_guard
def _cmd_feed_last_updated(args: argparse.Namespace) -> int:
    with _client(args) as api:
        print(api.data_feed.last_updated())
    return 0


@_guard
def _cmd_account(args: argparse.Namespace) -> int:
    with _client(args) as api:
        if args.account_action == "today":
            print(api.account.requests_today())
        else:
            for r in api.account.requests():
                print(f"{r['date']}  {r['count']}")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    """Entry for tests: the whole ``vehicledata`` parser."""
    from .cli import main as cli_main

    return cli_main(argv)


__all__ = ["register", "main"]
