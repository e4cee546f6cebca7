"""Expectations over the whole built catalogue (issue 38): every realism rule of the builder as a
count over the database, zero or under its stated bound (python/vehicledata/dataset/realism.py;
`python -m vehicledata.dataset.realism DB` prints the list)."""
from __future__ import annotations

from pathlib import Path

import pytest

from vehicledata.dataset import realism


@pytest.fixture(scope="module")
def results(database: Path):
    out = realism.run(database)
    print("\n" + realism.report(out))
    return {r.name: r for r in out}


@pytest.mark.parametrize("name", [c[0] for c in realism.CHECKS])
def test_expectation(results, name: str) -> None:
    r = results[name]
    assert r.count <= r.bound, f"{r.name}: {r.count} > {r.bound} ({r.what}); e.g. {r.examples[:5]}"


def test_issue_targets_are_the_bounds() -> None:
    """The bounds are issue 38's targets: none of them may be loosened quietly."""
    bounds = {name: bound for name, bound, _, _ in realism.CHECKS}
    assert bounds["mainstream_rows_over_150k"] == 0
    assert bounds["foreign_grades_2015_2020"] == 0
    assert bounds["hybrid_named_gas_rows"] == 0
    assert bounds["package_named_trim_groups"] <= 20
    assert bounds["inverted_ladders"] <= 3
