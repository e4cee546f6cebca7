"""docs/notebook.ipynb (committed with its outputs) runs again, top to bottom, in a real kernel
against a fresh emulator, and shows what it showed when committed."""
from __future__ import annotations

import copy
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "notebook.ipynb"


def _text(cell) -> str:
    return "".join(str(o.get("text") or o.get("data", {}).get("text/plain", "")) for o in cell.get("outputs", []))


def test_the_notebook_runs_and_shows_what_was_committed(database, tmp_path, monkeypatch):
    monkeypatch.setenv("VEHICLEDATA_HOME", str(Path(database).parent))
    committed = nbformat.read(NOTEBOOK, as_version=4)
    nb = copy.deepcopy(committed)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    old = [c for c in committed.cells if c.cell_type == "code"]
    assert all(o.get("output_type") != "error" for c in code for o in c.outputs)
    # Outputs that do not depend on the port, the clock or the machine are the committed ones.
    by_source = {c.source: _text(c) for c in old}
    for cell in code:
        if cell.source.startswith(("api.trims.filters", "[f for f in", "try:", "trim = ", "decoded = ",
                                   "api.obd_codes", "detail = ", "feed[")):
            assert _text(cell) == by_source[cell.source], cell.source
    # The response cache: the re-run of the same vehicles search sends no request and gives the same frame.
    cached = next(c for c in code if "cached_client()" in c.source)
    sent, _, rest = _text(cached).partition(" requests, then ")
    assert int(sent) > 0 and rest.strip() == "0 on the re-run; same frame: True", _text(cached)
    plot = next(c for c in code if "plot.barh" in c.source)
    assert any("image/png" in o.get("data", {}) for o in plot.outputs)
    assert all(o.get("output_type") != "error" for c in old for o in c.outputs)
