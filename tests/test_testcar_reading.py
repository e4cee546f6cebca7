"""The Test Car List is read in two worker processes; where a process pool cannot be made (no
POSIX semaphores: no /dev/shm, as in AWS Lambda or a bare chroot) it is read in this process,
with the same result (found by `make wheels-test` in the Debian roots)."""
from __future__ import annotations

from pathlib import Path

import pytest

from vehicledata.dataset import paths, testcar


def _key(cars: testcar.TestCars):
    return sorted((k, sorted(map(repr, v))) for k, v in cars.by_key.items())


def test_without_a_process_pool_the_list_is_read_here(sources_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = sources_dir / paths.TESTCAR_DIR
    files = [p for p in testcar.files_in(folder) if p.suffix.lower() == ".csv"]  # 2015, 2016: quick to read
    assert files, folder
    pooled = testcar.Reading(files).result()

    def no_semaphores(*args: object, **kw: object) -> None:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(testcar, "ProcessPoolExecutor", no_semaphores)
    here = testcar.Reading(files)
    assert here._pool is None and here._futures == []
    assert _key(here.result()) == _key(pooled) and pooled.by_key
