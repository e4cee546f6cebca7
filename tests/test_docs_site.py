"""The docs site (issue 41; mkdocs.yml, `make docs`): it builds with warnings as errors (broken links
and anchors, pages left out of the nav, docstrings the reference cannot render), its API reference
has every public name of `vehicledata` and of the core's stubs, the README's index names every page,
the generated data reference matches the built dataset, and no guide holds lab notes."""
from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set

import pytest

import vehicledata as vd

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as `make docs` builds it (mkdocs build --strict), into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                        "-d", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    # (not -q: mkdocs 1.6 then exits 0 on a strict build it aborted)
    assert p.returncode == 0, f"mkdocs build --strict failed (make docs installs mkdocs):\n{p.stdout}\n{p.stderr}"
    assert "WARNING" not in p.stderr, p.stderr
    return out


def anchors(site: Path) -> Set[str]:
    ids: Set[str] = set()
    for page in (site / "api").glob("*.html"):
        ids |= set(re.findall(r'id="(vehicledata[^"]*)"', page.read_text(encoding="utf-8")))
    return ids


def nav_pages() -> List[str]:
    import yaml

    # mkdocs.yml has no custom tags; only the nav is read
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages: List[str] = []

    def walk(item: object) -> None:
        if isinstance(item, str):
            pages.append(item)
        elif isinstance(item, list):
            for x in item:
                walk(x)
        elif isinstance(item, dict):
            for x in item.values():
                walk(x)

    walk(config["nav"])
    return pages


def test_the_site_has_every_page_of_the_nav(site: Path) -> None:
    pages = nav_pages()
    assert len(pages) == len(set(pages))
    # --strict with validation.omitted_files: a page of docs/ outside the nav fails the build
    assert {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")} == set(pages)
    for page in pages:
        assert (site / page.replace(".md", ".html")).is_file(), page


def resolve(path: str) -> object:
    """The object an anchor of the reference names (vehicledata.pager.Pager.to_pandas), or None."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr, None)
        return obj
    return None


def test_the_api_reference_lists_every_public_name(site: Path) -> None:
    documented = [resolve(i) for i in anchors(site)]
    missing = [name for name in vd.__all__ if name != "__version__"
               and not any(getattr(vd, name) is obj for obj in documented)]
    assert not missing, f"not in the API reference (docs/api/*.md): {missing}"
    assert "__version__" in vd.__all__ and "`vd.__version__`" in (DOCS / "api" / "index.md").read_text()


def stub_names() -> Dict[str, List[str]]:
    """The public names of _core.pyi and the public methods of its public classes."""
    tree = ast.parse((ROOT / "python" / "vehicledata" / "_core.pyi").read_text(encoding="utf-8"))
    out: Dict[str, List[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            members = [m.name for m in getattr(node, "body", []) if isinstance(m, ast.FunctionDef)
                       and not m.name.startswith("_")] if isinstance(node, ast.ClassDef) else []
            out[node.name] = members
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name) and not t.id.startswith("_"):
                    out[t.id] = []
    return out


def test_the_api_reference_lists_every_public_name_of_the_stubs(site: Path) -> None:
    ids = anchors(site)
    names = stub_names()
    assert "VinDecoder" in names and names["VinDecoder"]
    missing = [f"{n}.{m}" if m else n for n, members in names.items() for m in [""] + members
               if f"vehicledata._core.{n}.{m}".rstrip(".") not in ids]
    assert not missing, f"_core.pyi names not in docs/api/core.md: {missing}"


def test_the_readme_index_names_every_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    index = readme.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    linked = set(re.findall(r"\]\(docs/([^)#]+\.md)", index))
    assert set(nav_pages()) - linked == set(), "README.md's Documentation list misses these pages"
    assert linked - set(nav_pages()) == set(), "README.md's Documentation list names pages the site does not have"


def test_the_data_reference_is_the_built_datasets(database: Path) -> None:
    tool = ROOT / "tools" / "gen_data_reference.py"
    p = subprocess.run([sys.executable, str(tool), "--db", str(database), "--check"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr


# ---- lab notes stay in the reports ---------------------------------------------------------------
# A report is docs/performance.md, docs/reliability.md or a page under docs/reports/; every other page
# of docs/ is a guide or a reference. A guide's prose (its text outside code blocks and `code`) names
# no profiler (callgrind, cachegrind, valgrind), no instruction count ("Ir") and no load average, and
# has no calendar date from 2020 on (2026-11 or 2026-11-28): a dated figure is a lab note.
REPORTS = {"performance.md", "reliability.md"}
LAB_WORDS = re.compile(r"\b(callgrind|cachegrind|valgrind|load average)\b|\bIr\b", re.I)
LAB_DATE = re.compile(r"\b20[2-9]\d-(0[1-9]|1[0-2])(-[0-3]\d)?\b")


def lab_notes(text: str) -> List[str]:
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    return [m.group(0) for m in LAB_WORDS.finditer(prose)] + [m.group(0) for m in LAB_DATE.finditer(prose)]


def guide_pages() -> List[Path]:
    return [p for p in sorted(DOCS.rglob("*.md"))
            if p.relative_to(DOCS).as_posix() not in REPORTS and p.relative_to(DOCS).parts[0] != "reports"]


def test_the_lab_note_rule() -> None:
    assert lab_notes("Measured 2026-11-28 15:01 UTC: 4.2 us") == ["2026-11-28"]
    assert lab_notes("callgrind counts 58,377,302 Ir") == ["callgrind", "Ir"]
    assert lab_notes("at a load average of 7-10") == ["load average"]
    assert lab_notes("result (2026-11)") == ["2026-11"]
    # not lab notes: dates in code, year ranges, other numbers with dashes
    assert lab_notes("`modified` as `2026-11-23T06:30:00-05:00`; model years 2015-2020, 2021-2026") == []
    assert lab_notes("```python\nsince='2025-01-01'\n```\nCVE-2024-0450; the rule: `callgrind`, `Ir`") == []


def test_no_guide_page_has_lab_notes() -> None:
    pages = guide_pages()
    assert {"client.md", "vin.md", "async.md", "emulator.md", "dataset.md"} <= {p.name for p in pages}
    found = {p.relative_to(DOCS).as_posix(): lab_notes(p.read_text(encoding="utf-8")) for p in pages}
    assert {page: hits for page, hits in found.items() if hits} == {}, "move these to docs/reports/"
