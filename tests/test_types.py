"""Types a type checker sees: the generated ``_resources.py`` is current, and mypy, run over a usage
file, knows each record's fields (``TrimRecord.msrp: Optional[int]``, ``VehicleRecord.combined_mpg``
of ``api.vehicles``), the search keywords and ``vd.ClientOptions``' fields, and fails on an unknown
attribute or a keyword of the wrong type."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

GOOD = '''
from typing import List, Optional
import vehicledata as vd

def use(api: vd.Client) -> None:
    for t in api.trims.search(year=2020, make="Toyota"):
        msrp: Optional[int] = t.msrp
        make: str = t.make
        print(msrp, make, t.to_dict())
    hp: Optional[int] = api.engines.search(year=2020).first(3)[0].horsepower_hp
    detail = api.trims.get(1)
    mpg = detail.mileages[0].combined_mpg if detail.mileages else None
    reveal_type(t)
    reveal_type(detail)
    print(hp, mpg)
    car = api.vehicles.get(9366)
    combined: Optional[int] = car.combined_mpg
    length: Optional[float] = car.length
    reveal_type(car)
    for v in api.vehicles.search(year=2020, make="Toyota"):
        reveal_type(v)
        print(v.msrp, v.drive_type, v.synthetic_fields, combined, length)
    opts = vd.ClientOptions(timeout=5.0, rate_limit=None, max_parallel=8)
    print(vd.Client(options=opts).options.timeout, vd.AsyncClient(options=opts).options.max_parallel)
'''

BAD = '''
import vehicledata as vd

def use(api: vd.Client) -> None:
    for t in api.trims.search(year=2020):
        print(t.msrpp)
    api.engines.search(year="twenty twenty")
    print(api.vehicles.get(9366).combined_mpgg)
    api.vehicles.search(year="2020")
    for v in api.vehicles.search(year=2020):
        print(v.lenght)

async def ause(api: vd.AsyncClient) -> None:
    print((await api.vehicles.get(9366)).combined_mpgg)

OPTIONS = vd.ClientOptions(timeout="5")
'''


def mypy(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    usage = tmp_path / "usage.py"
    usage.write_text(text)
    env = dict(os.environ, MYPYPATH=str(ROOT / "python"))  # the sources' types, whatever is installed
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(ROOT / ".mypy_cache" / "usage"),
                           "--config-file", "", "--ignore-missing-imports", "--follow-imports", "silent",
                           str(usage)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)


def test_the_generated_resources_are_current():
    from vehicledata import _typegen

    assert (ROOT / "python/vehicledata/_resources.py").read_text() == _typegen.python_source(), \
        "stale: run tools/gen_docs.py"


def test_mypy_sees_record_fields_and_search_keywords(tmp_path):
    # one run (mypy over the package and pandas' stubs takes minutes on a busy machine): the good
    # usage reveals the record types and has no error, the bad one has exactly the seven errors
    result = mypy(tmp_path, GOOD + BAD.replace("def use(", "def misuse("))
    out = result.stdout
    assert 'Revealed type is "vehicledata._resources.TrimRecord"' in out, out
    assert 'Revealed type is "vehicledata._resources.TrimDetailRecord"' in out, out
    assert out.count('Revealed type is "vehicledata._resources.VehicleRecord"') == 2, out
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert len(errors) == 7, out
    assert '"TrimRecord" has no attribute "msrpp"' in errors[0]
    assert 'Argument "year" to "search" of "EnginesResource" has incompatible type "str"' in errors[1]
    assert '"VehicleRecord" has no attribute "combined_mpgg"' in errors[2]
    assert 'Argument "year" to "search" of "VehiclesResource" has incompatible type "str"' in errors[3]
    assert '"VehicleRecord" has no attribute "lenght"' in errors[4]
    assert '"VehicleRecord" has no attribute "combined_mpgg"' in errors[5]  # the async client's get()
    assert 'Argument "timeout" to "ClientOptions" has incompatible type "str"' in errors[6]  # the typed options
