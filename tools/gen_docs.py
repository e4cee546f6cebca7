#!/usr/bin/env python3
"""Regenerate docs/resources.md from the schema table.

    PYTHONPATH=python:build-dev/pkg .venv/bin/python tools/gen_docs.py   # or with the package installed
"""
from pathlib import Path

from vehicledata import schema

out = Path(__file__).resolve().parent.parent / "docs" / "resources.md"
out.write_text(schema.markdown() + "\n", encoding="utf-8")
print(f"wrote {out}")
