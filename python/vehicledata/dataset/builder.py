"""Building the emulator database from the raw public sources (see docs/dataset.md)."""
from __future__ import annotations

import glob
import hashlib
import os
import re
import sqlite3
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Union

from .. import schema
from . import epa, fetch, naming, obd, paths, powersports, provenance, rows, store, sweep, testcar, vpic
from .epa import SourceError
from .progress import ProgressArg, Reporter, reporter_for
from .timefmt import eastern_stamp

PathLike = Union[str, "os.PathLike[str]"]
NO_SOURCES = ("no raw sources: no --sources, no VEHICLEDATA_SOURCES, no pyvehicledata-data package and no "
              "EPA download reachable; " + paths.DATA_HINT + ", or point --sources or VEHICLEDATA_SOURCES at "
              "the official downloads (docs/dataset.md)")


@dataclass
class Sources:
    """The inputs of one build, as found."""

    kind: str                  # "files" | "download"
    epa: Path
    obd: Optional[Path]        # the OBD code table (dtc-codes.sqlite), or None: no OBD codes
    vpic: Optional[Path]
    directory: Optional[Path] = None
    notes: List[str] = field(default_factory=list)
    testcars: Optional[Path] = None   # folder of EPA's Test Car List files
    sweep: Optional[Path] = None      # the vPIC full sweep

    def inputs(self) -> List[Path]:
        """Every input file, in a fixed order (for the fingerprint)."""
        out = [p for p in (self.epa, self.obd, self.vpic, self.sweep) if p is not None]
        if self.testcars is not None:
            out += testcar.files_in(self.testcars)
        return out

    @property
    def label(self) -> str:
        return f"files:{self.directory}" if self.kind == "files" else self.kind


@dataclass
class BuildReport:
    path: Path
    source: str
    counts: Dict[str, int]
    seconds: float
    content_hash: str
    source_fingerprint: str
    vpic_path: Optional[Path] = None
    timings: Dict[str, float] = field(default_factory=dict)
    warnings: List[str] = field(default_factory=list)
    #: True when this call waited for another build of the folder and took its result (current
    #: for the same sources) instead of building again; `built_at` is then that build's time.
    reused: bool = False
    built_at: str = ""

    def summary(self) -> str:
        if self.reused:
            lines = [f"reused {self.path}, built by another process from {self.source} while this one waited "
                     f"(built {self.built_at} US Eastern)"]
        else:
            lines = [f"built {self.path} from {self.source} in {self.seconds:.1f} s"]
        for table, n in self.counts.items():
            lines.append(f"  {table:<16} {n:>9,}")
        if self.vpic_path:
            lines.append(f"  vPIC tables      {self.vpic_path}")
        lines.append(f"  content hash     {self.content_hash[:16]}")
        return "\n".join(lines)


# ---- sources ------------------------------------------------------------------------------

def _from_directory(directory: Path, origin: str) -> Sources:
    if not directory.is_dir():
        raise SourceError(f"{origin}: {directory} is not a directory")
    epa_path = paths.find_in(directory, paths.EPA_FILE, paths.EPA_FILE_ALT)
    if epa_path is None:
        raise SourceError(f"{origin}: {directory} has no EPA table ({paths.EPA_FILE} or "
                          f"{', '.join(paths.EPA_FILE_ALT)}); see docs/dataset.md")
    notes = []
    obd_path = paths.find_in(directory, paths.OBD_FILE, paths.OBD_FILE_ALT)
    if obd_path is None:
        notes.append(f"{directory} has no {paths.OBD_FILE}: no OBD codes")
    vpic_path = paths.find_in(directory, paths.VPIC_FILE, paths.VPIC_FILE_ALT) or _fetched_vpic()
    if vpic_path is None:
        notes.append(f"{directory} has no {paths.VPIC_FILE} and none was fetched: no VIN tables, the VIN decoder "
                     f"will not work (`vehicledata dataset fetch` gets them)")
    tc = directory / paths.TESTCAR_DIR
    testcars = tc if tc.is_dir() and testcar.files_in(tc) else None
    if testcars is None:
        notes.append(f"{directory} has no {paths.TESTCAR_DIR}/: horsepower and test weights stay NULL")
    sweep_path = paths.find_in(directory, paths.SWEEP_FILE)
    if sweep_path is None:
        notes.append(f"{directory} has no {paths.SWEEP_FILE}: no vPIC trims, curb weights, wheelbases, seats "
                     f"or base prices")
    return Sources("files", epa_path, obd_path, vpic_path, directory=directory.resolve(), notes=notes,
                   testcars=testcars, sweep=sweep_path)


def _fetched_vpic() -> Optional[Path]:
    """The vPIC tables `vehicledata dataset fetch` put in the downloads folder, if it did."""
    path = paths.downloads_dir() / paths.VPIC_FILE
    return path if path.is_file() and path.stat().st_size == fetch.SIZE else None


def _download_epa(log, fetch: bool = True) -> Optional[Path]:
    """The cached EPA download, fetched first if `fetch` and not cached yet."""
    target = paths.downloads_dir() / "vehicles.csv.zip"
    if target.is_file():
        return target
    if not fetch or os.environ.get("VEHICLEDATA_OFFLINE"):
        return None
    tmp = target.with_name(target.name + f".part{os.getpid()}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        log(f"downloading {paths.EPA_URL} ...")
        req = urllib.request.Request(paths.EPA_URL, headers={"User-Agent": "pyvehicledata-dataset-builder"})
        with urllib.request.urlopen(req, timeout=20) as resp, open(tmp, "wb") as fh:
            while True:
                chunk = resp.read(1 << 16)
                if not chunk:
                    break
                fh.write(chunk)
        os.replace(tmp, target)
        return target
    except Exception as exc:  # no network, proxy, HTTP error: said, then the caller's error
        log(f"download failed: {exc}")
        return None
    finally:
        if tmp.exists():
            tmp.unlink()


def find_sources(sources: Optional[PathLike] = None, download: bool = True, log=None) -> Sources:
    """Sources in order: `sources`, $VEHICLEDATA_SOURCES, the installed `pyvehicledata-data` package,
    the data/ folder of the checkout an editable install runs from, the official EPA download
    (cached in data_home()/downloads; `download=False`: only an already cached one). A folder
    without the vPIC tables takes the ones `vehicledata dataset fetch` cached. None of them, or a
    folder given but unusable, is a SourceError naming what to do. An empty value is unset."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    if sources is not None and str(sources) != "":
        return _from_directory(Path(sources).expanduser(), "--sources")
    env = os.environ.get("VEHICLEDATA_SOURCES")
    if env:
        return _from_directory(Path(env).expanduser(), "VEHICLEDATA_SOURCES")
    packaged = paths.packaged_sources()
    if packaged is not None:
        return _from_directory(packaged, "pyvehicledata-data")
    checkout = paths.repository_sources()
    if checkout is not None:
        return _from_directory(checkout, "the checkout's data/")
    got = _download_epa(log, fetch=download)
    if got is not None:
        return Sources("download", got, None, None, notes=[
            "EPA table from the official download; no OBD codes and no vPIC VIN tables (download them as "
            "docs/dataset.md says and use --sources, or " + paths.DATA_HINT + ")"])
    raise SourceError(NO_SOURCES)


def builder_digest() -> str:
    """Hash of the builder's own code and reviewed tables: a changed builder rebuilds."""
    h = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for p in sorted(list(here.glob("*.py")) + list(here.glob("*.csv"))):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def fingerprint(src: Sources) -> str:
    h = hashlib.sha256()
    h.update(f"{src.kind}\n{store.schema_version()}\n{builder_digest()}\n".encode())
    for p in src.inputs():
        h.update(f"{p.name}:{p.stat().st_size}:{fetch.sha256_of(p)}\n".encode())
    return h.hexdigest()


# ---- build --------------------------------------------------------------------------------

def build(sources: Optional[PathLike] = None, out: Optional[PathLike] = None, progress: ProgressArg = None,
          *, found: Optional[Sources] = None) -> BuildReport:
    """Build the database at `out` (default: default_db_path()) and the vPIC tables beside it.

    The pair is replaced together or not at all: the vPIC tables go to a file of their own,
    vpic-<content id>.db (kept when it is already there), which the new database's meta vpic_path
    names; the database is written to a temporary file and renamed into place, and only then are
    vPIC files no database of the folder names removed. A build killed at any moment leaves the
    old database with its own vPIC file. One build per folder at a time: a second one waits for
    the lock (saying so on stderr, naming the holder) and, when the database is then current for
    the same sources, takes it (BuildReport.reused) instead of building again. Raises SourceError
    (a ValueError) naming a bad or missing input.
    """
    t0 = time.perf_counter()
    rep = reporter_for(progress)
    out_path = Path(out).expanduser() if out is not None else paths.default_db_path()
    with _lock(out_path) as waited:
        src = found or find_sources(sources, log=rep.line)
        if waited is not None:
            if is_current(out_path, src):
                waited.say(f"{out_path} is current now, reusing it")
                return _reused(out_path, src, time.perf_counter() - t0)
            waited.say(f"building {out_path}")
        try:
            return _build(src, out_path, rep, t0)
        finally:
            _remove_unused(out_path)


def _reused(out_path: Path, src: Sources, seconds: float) -> BuildReport:
    meta = store.read_meta(out_path)
    counts = {k[len("count_"):]: int(v) for k, v in meta.items() if k.startswith("count_")}
    vp = meta.get("vpic_path", "")
    return BuildReport(path=out_path, source=meta.get("source", src.label), counts=counts, seconds=seconds,
                       content_hash=meta.get("content_hash", ""), source_fingerprint=meta.get("source_fingerprint", ""),
                       vpic_path=out_path.parent / vp if vp else None, reused=True,
                       built_at=meta.get("built_at", ""))


def _build(src: Sources, out_path: Path, rep: Reporter, t0: float) -> BuildReport:
    """build() under the folder's lock."""
    warn_lines: List[str] = []

    def warn(msg: str) -> None:
        warn_lines.append(msg)
        print(f"warning: {msg}", file=sys.stderr, flush=True)

    for note in src.notes:
        warn(note)
    rep.line(f"sources: {src.label} ({src.epa})")
    timings: Dict[str, float] = {}

    reading = testcar.start_reading(src.testcars, warn) if src.testcars is not None else None
    stage = rep.stage("read EPA vehicles")
    vehicles = epa.read_vehicles(src.epa, tick=stage.update)
    timings["read_epa"] = stage.close()

    vpic_target: Optional[Path] = None
    layouts = None
    names = None
    vpic_meta: Dict[str, str] = {}
    if src.vpic is not None:
        # A file of its own per content: the database in place keeps naming its own until the
        # new database is renamed over it (docs/dataset.md, "Where the database goes").
        vpic_target = out_path.parent / paths.vpic_name(vpic.content_id(fetch.sha256_of(src.vpic)))
        stage = rep.stage("vPIC tables", total=src.vpic.stat().st_size, unit="B")
        # Kept when whole; written anew when the database in place names it and finds it damaged
        # (a table dropped keeps the file's size: reusable() alone would not see it).
        current = store.read_meta(out_path)
        damaged = current.get("vpic_path") == vpic_target.name and vpic.problem(out_path, current) is not None
        if not damaged and vpic.reusable(vpic_target, src.vpic):
            timings["vpic"] = stage.close(f"{vpic_target} kept (same source)")
        else:
            size = vpic.install(src.vpic, vpic_target, progress=lambda done, total: stage.update(done))
            timings["vpic"] = stage.close(f"{size / 1e6:.1f} MB -> {vpic_target}")
        vpic_meta = {"vpic_path": vpic_target.name, "vpic_bytes": str(vpic_target.stat().st_size),
                     "vpic_tables": ",".join(vpic.tables(vpic_target))}
        stage = rep.stage("vPIC engine layouts")
        layouts = vpic.engine_layouts(vpic_target)
        stage.update(len(layouts))
        timings["vpic_layouts"] = stage.close(f"{len(layouts):,} make/model/cylinder keys")
        stage = rep.stage("vPIC model, trim and series names")
        names = naming.load(vpic_target)
        stage.update(len(names.models))
        timings["vpic_names"] = stage.close(f"{sum(len(m) for m in names.models.values()):,} vPIC models")

    decoded = None
    if src.sweep is not None:
        stage = rep.stage("vPIC sweep (trims, weights, prices)")
        decoded = sweep.read(src.sweep)
        stage.update(len(decoded.groups))
        timings["sweep"] = stage.close(f"{len(decoded.groups):,} year/make/model groups")
    tested = None
    if reading is not None:
        stage = rep.stage("EPA Test Car List")
        tested = reading.result()
        stage.update(tested.count)
        timings["testcars"] = stage.close(f"{tested.count:,} tested configurations")

    stage = rep.stage("map and derive", total=len(vehicles))
    tables = rows.build_rows(vehicles, tick=stage.update, layouts=layouts, names=names, sweep=decoded,
                             testcars=tested)
    timings["map"] = stage.close()
    if layouts is not None:
        rep.line(f"  engine layouts: {tables.layouts_from_vpic:,} set from vPIC VIN patterns over the make rules")
    for (col, value), n in sorted(tables.unmapped.items()):
        warn(f"{n} EPA rows with {col} {value!r}: no value of the service's list, stored as NULL")

    stage = rep.stage("OBD codes")
    codes = obd.read_code_table(src.obd) if src.obd is not None else []
    tables.rows["obd_codes"] = [{"code": c, "description": d, "make": m, "demo": demo} for c, d, m, demo in codes]
    stage.update(len(codes))
    timings["obd"] = stage.close()

    stage = rep.stage("powersports (vPIC motorcycles)")
    ps = powersports.build_rows(vpic_target) if vpic_target else {t: [] for t in powersports.TABLES}
    tables.rows.update(ps)
    stage.update(len(ps["powersports_models"]))
    timings["powersports"] = stage.close(f"{len(ps['powersports_models']):,} models")

    fp = fingerprint(src)

    tmp = out_path.with_name(out_path.name + f".tmp{os.getpid()}")
    if tmp.exists():
        tmp.unlink()
    counts: Dict[str, int] = {}
    try:
        con = sqlite3.connect(tmp, isolation_level=None)
        try:
            con.execute("PRAGMA journal_mode=OFF")
            con.execute("PRAGMA synchronous=OFF")
            con.execute("PRAGMA cache_size=-65536")
            con.execute("BEGIN")
            store.create(con)
            total_rows = sum(tables.count(t) for t in schema.tables())
            stage = rep.stage("write tables", total=total_rows)
            done = 0
            for table in schema.tables():
                table_rows = tables.table_rows(table)
                if table_rows is None:
                    warn(f"the builder makes no rows for the schema table {table!r}: left empty")
                    table_rows = []
                counts[table] = store.insert(con, table, table_rows, warn)
                done += counts[table]
                stage.update(done)
            store.write_provenance(con, provenance.rows())
            store.write_vpic_maps(con, tables.vpic_makes, tables.vpic_models)
            store.write_value_origins(con, tables.origins)
            timings["write"] = stage.close()
            stage = rep.stage("indexes", total=len(schema.tables()), unit="tables")
            n_idx = [0]

            def tick(_table: str) -> None:
                n_idx[0] += 1
                stage.update(n_idx[0])

            store.create_indexes(con, tick)
            timings["indexes"] = stage.close()
            con.execute("COMMIT")  # the rows are in the file: two processes hash its tables at once
            stage = rep.stage("content hash")
            digest = store.content_hash(tmp)
            timings["hash"] = stage.close(digest[:16])
            con.execute("BEGIN")
            meta = {
                "built_at": eastern_stamp(),
                "schema_version": store.schema_version(),
                "source": src.label,
                "source_fingerprint": fp,
                "content_hash": digest,
                "vpic_path": "",
                "demo_years": f"{schema.DEMO_YEARS[0]}-{schema.DEMO_YEARS[1]}",
            }
            meta.update(vpic_meta)
            meta.update({f"count_{t}": str(n) for t, n in counts.items()})
            store.write_meta(con, meta)
            con.execute("COMMIT")
        finally:
            con.close()
        os.replace(tmp, out_path)
    finally:
        if tmp.exists():
            tmp.unlink()
    seconds = time.perf_counter() - t0
    report = BuildReport(path=out_path, source=src.label, counts=counts, seconds=seconds, content_hash=digest,
                         source_fingerprint=fp, vpic_path=vpic_target, timings=timings, warnings=warn_lines)
    return report


@dataclass
class _Waited:
    """What a build that waited for the folder's lock knows of it: whom it waited for, how long."""
    holder: str
    seconds: float

    def say(self, what: str) -> None:
        print(f"waited {self.seconds:.1f} s for {self.holder}: {what}", file=sys.stderr, flush=True)


def _holder_line() -> str:
    argv = list(sys.argv) or ["python"]
    name = Path(argv[0]).name
    if name == "__main__.py":  # python -m vehicledata
        name = Path(argv[0]).parent.name
    command = " ".join([name or "python", *argv[1:]])
    if len(command) > 400:
        command = command[:397] + "..."
    return f"pid {os.getpid()} since {time.strftime('%H:%M:%S')}: {command}"


@contextmanager
def _lock(db_path: Path) -> Iterator[Optional[_Waited]]:
    """The build lock of the database's folder (paths.BUILD_LOCK): one build per folder at a time,
    so parallel callers (test sessions, two `vehicledata dataset build`) build once, and no build
    removes a vPIC file another is about to name. The holder writes a line naming itself (pid,
    start time, command) into the lock file; a caller that has to wait says so on stderr with
    that line, and gets a _Waited (None when it did not wait)."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # not POSIX: no locking
        yield None
        return
    fd = os.open(db_path.parent / paths.BUILD_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        waited: Optional[_Waited] = None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "another process"
            print(f"waiting for another build in {db_path.parent} ({holder}) ...", file=sys.stderr, flush=True)
            t0 = time.perf_counter()
            fcntl.flock(fd, fcntl.LOCK_EX)
            waited = _Waited(holder.split(" since ")[0], time.perf_counter() - t0)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (_holder_line() + "\n").encode(), 0)
            yield waited
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


_VPIC_FILE = re.compile(r"vpic-[0-9a-f]{16}\.db")


def _remove_unused(db_path: Path) -> None:
    """Under the folder's lock, after a build (done or failed): the vPIC files no database of the
    folder names in its meta vpic_path (vpic-<id>.db, and the vpic.db of databases built before),
    and the temporary files killed builds left."""
    folder = db_path.parent
    vpic_files = [p for p in folder.glob(paths.VPIC_GLOB) if _VPIC_FILE.fullmatch(p.name)]
    if (folder / paths.VPIC_NAME).is_file():
        vpic_files.append(folder / paths.VPIC_NAME)
    named = set()
    for db in folder.glob("*.db"):
        if db not in vpic_files:
            named.add(store.read_meta(db).get("vpic_path", ""))
    leftovers = [p for p in folder.glob("vpic*.db.tmp*") if p.name.split(".tmp")[-1].isdigit()]
    leftovers += [p for p in folder.glob(glob.escape(db_path.name) + ".tmp*") if p.name.split(".tmp")[-1].isdigit()]
    for p in [f for f in vpic_files if f.name not in named] + leftovers:
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def _pair_whole(db_path: Path, meta: Dict[str, str]) -> bool:
    """Whether the vPIC file the database names is there and whole (vpic.problem)."""
    return vpic.problem(db_path, meta) is None


def is_current(db_path: Path, src: Sources) -> bool:
    """Whether the database at `db_path` is the build of `src` by this builder and schema, with
    its vPIC file whole (a damaged or missing one rebuilds)."""
    meta = store.read_meta(db_path)
    if not meta or meta.get("schema_version") != store.schema_version():
        return False
    if meta.get("source_fingerprint") != fingerprint(src):
        return False
    return _pair_whole(db_path, meta)


def _built_from_files(db_path: Path) -> bool:
    meta = store.read_meta(db_path)
    if not meta or meta.get("schema_version") != store.schema_version():
        return False
    return meta.get("source", "").startswith("files:") and _pair_whole(db_path, meta)


#: The line ensure_database() prints on stderr before it builds (the emulator's first start).
BUILDING = "building the emulator database {path} (about a minute, once) ..."


def ensure_database(sources: Optional[PathLike] = None, out: Optional[PathLike] = None,
                    progress: ProgressArg = True) -> Path:
    """The database path, built first only if it is missing or stale (schema or inputs changed,
    or its vPIC file damaged).

    A build says so on stderr (BUILDING), then its stages as they end (`progress`: True, the
    default, lines on stderr or tqdm bars on a terminal; False or None: silent; see
    dataset.progress). Parallel callers build once: the others wait for the folder's lock (saying
    so) and take the result. Without sources, a database already built from the cached EPA
    download is reused without touching the network; with no sources at all it is a SourceError
    saying how to get them."""
    out_path = Path(out).expanduser() if out is not None else paths.default_db_path()
    if not sources and not os.environ.get("VEHICLEDATA_SOURCES") and _built_from_files(out_path):
        # Nobody named sources now, but this database was built from real files earlier (and
        # for this schema): keep it rather than replace it with a download.
        return out_path
    # First without the network: a current build from the cached download is kept
    # (`vehicledata dataset build` is the way to try the download again).
    try:
        src = find_sources(sources, download=False)
    except SourceError:
        src = find_sources(sources)  # the download, else the one-line error of NO_SOURCES
    if is_current(out_path, src):
        return out_path
    rep = reporter_for(progress)
    with _lock(out_path) as waited:
        if is_current(out_path, src):
            if waited is not None:
                waited.say(f"{out_path} is current now, reusing it")
            return out_path
        if waited is not None:
            waited.say(f"building {out_path}")
        t0 = time.perf_counter()
        rep.line(BUILDING.format(path=out_path))
        try:
            report = _build(src, out_path, rep, t0)
        finally:
            _remove_unused(out_path)
        rep.line(f"built {out_path} in {report.seconds:.0f} s")
    return out_path
