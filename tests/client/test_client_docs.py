"""Every ```python snippet of README.md, docs/quickstart.md and docs/client.md runs against the emulator.

Snippets of one file share a namespace, in order (a later one may use ``api`` or ``path`` from
an earlier one); ``api`` is a premium client of the test emulator whenever a snippet starts, and
``vd.Client()`` without arguments reaches the emulator through the environment.  Signatures are
fenced as ``text``, not run.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import vehicledata as vd
from vehicledata.testing import DEMO_ACCOUNTS

ROOT = Path(__file__).resolve().parents[2]
PREMIUM = DEMO_ACCOUNTS["premium"]


def snippets(name: str):
    return re.findall(r"```python\n(.*?)```", (ROOT / name).read_text(), re.S)


@pytest.mark.parametrize("name", ["README.md", "docs/quickstart.md", "docs/client.md"])
def test_every_snippet_runs(name, emulator, api, monkeypatch, tmp_path):
    monkeypatch.setenv("VEHICLEDATA_BASE_URL", emulator.url)
    monkeypatch.setenv("VEHICLEDATA_API_TOKEN", PREMIUM["api_token"])
    monkeypatch.setenv("VEHICLEDATA_API_SECRET", PREMIUM["api_secret"])
    monkeypatch.chdir(tmp_path)
    blocks = snippets(name)
    assert blocks, f"{name} has no python snippet"
    ns = {"vd": vd, "vehicledata": vd}
    for i, code in enumerate(blocks, 1):
        ns["api"] = api
        try:
            exec(compile(code, f"{name}[snippet {i}]", "exec"), ns)
        except Exception as exc:  # name the snippet in the failure
            pytest.fail(f"{name} snippet {i} failed: {type(exc).__name__}: {exc}\n{code}")
