#!/usr/bin/env python3
"""Regenerate docs/resources.md and python/vehicledata/_resources.py (typed records, pagers and
search resources for type checkers) from the schema table.

    PYTHONPATH=python:build-dev/pkg .venv/bin/python tools/gen_docs.py   # or with the package installed
"""
from pathlib import Path

from vehicledata import _typegen, schema

out = Path(__file__).resolve().parent.parent / "docs" / "resources.md"
out.write_text(schema.markdown() + "\n", encoding="utf-8")
print(f"wrote {out}")
types = Path(__file__).resolve().parent.parent / "python" / "vehicledata" / "_resources.py"
types.write_text(_typegen.python_source(), encoding="utf-8")
print(f"wrote {types}")
