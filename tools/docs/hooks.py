"""mkdocs hook of the docs site (mkdocs.yml): the endpoint reference is made from the schema table.

docs/resources.md is the committed copy of `vehicledata.schema.markdown()` (tools/gen_docs.py writes
it, tests/test_schema.py checks it); the site takes the schema's text at build time, so the
endpoint reference shown is the schema's whatever the file says.
"""
from __future__ import annotations

from typing import Any


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if page.file.src_uri == "resources.md":
        from vehicledata import schema

        return schema.markdown() + "\n"
    return markdown
