"""Every ```python snippet of docs/notebook.md runs, in order, in one namespace, against the
emulator the page itself starts with ``Emulator().start()`` (and stops in its last snippet)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_every_notebook_md_snippet_runs(database, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VEHICLEDATA_HOME", str(Path(database).parent))
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs/notebook.md").read_text(), re.S)
    assert len(blocks) >= 6
    ns: dict = {}
    try:
        for i, code in enumerate(blocks, 1):
            try:
                exec(compile(code, f"docs/notebook.md[snippet {i}]", "exec"), ns)
            except Exception as exc:
                pytest.fail(f"docs/notebook.md snippet {i} failed: {type(exc).__name__}: {exc}\n{code}")
    finally:
        emu = ns.get("emu")
        if emu is not None and emu.running:
            emu.stop()
    out = capsys.readouterr().out.splitlines()
    # what the page claims: SUVs found, a hint for "AWD", a re-run from the cache with no request,
    # a full first run, the same rows in the second,
    # exactly the touched trims changed in the third, and one row per id
    assert re.fullmatch(r"\d+ SUVs", out[0]) and int(out[0].split()[0]) > 3
    assert "did you mean 'all wheel drive'?" in out[1]
    sent = int(out[2].split()[0])
    assert sent >= 5 and out[2] == f"{sent} requests, then 0 on the re-run; True"  # login + 4 crawls, then none
    first, again, same = out[3].split()
    assert int(first) > 1000 and again == first and same == "True"
    assert out[4] == "3 True"
    assert out[5] == f"{first} trim rows, {first} ids; {first} vehicles"  # the touched rows replaced, not added
    assert not ns["emu"].running
