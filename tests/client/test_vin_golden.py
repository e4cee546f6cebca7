"""The decoder against the committed golden VIN file (tests/data/vin_golden.jsonl.gz, written by
tools/vin_golden.py): 12,404 VINs with their full answers, so any change to the batch decoder's
fast path or to the single-VIN path is caught here, in `make test`, not by a comparison by hand."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("pyarrow")
ROOT = Path(__file__).resolve().parents[2]


def golden_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vin_golden", ROOT / "tools" / "vin_golden.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("threads", [1, 3])
def test_the_decoder_answers_as_the_golden_file(database: Path, threads: int) -> None:
    tool = golden_tool()
    golden = tool.read_golden()
    assert len(golden) == 12404
    kinds = {g["answer"][0] for g in golden}
    codes = {g["row"]["error_code"] for g in golden}
    assert kinds == {"ok", "invalid", "not_found"} and {"0", "1", "invalid_vin", "not_found"} <= codes
    got = list(tool.answers(str(database), [g["vin"] for g in golden], threads=threads))
    diff = tool.differences(golden, got)
    assert not diff, ("the decoder's answers moved; if the change is deliberate, run tools/vin_golden.py --write "
                      "and say why in the commit:\n" + "\n".join(diff))


def test_a_changed_answer_is_named() -> None:
    tool = golden_tool()
    golden = tool.read_golden()[:3]
    moved = [dict(g, row=dict(g["row"], make="Other")) if i == 1 else g for i, g in enumerate(golden)]
    diff = tool.differences(golden, moved)
    assert len(diff) == 1 and diff[0].startswith(repr(golden[1]["vin"]) + " row:") and '"make": "Other"' in diff[0]
