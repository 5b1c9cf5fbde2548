"""Put a benchmark's own output into README.md, between ``<!-- NAME -->`` and ``<!-- /NAME -->``.

The README's speed tables are therefore exactly what the script printed (issue 15: "the README
table comes from that script's output").
"""

from __future__ import annotations

import os
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def splice(name: str, text: str, readme: Path = README) -> None:
    """Replace the lines between the two markers called ``name`` with ``text`` (atomically)."""
    begin, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    content = readme.read_text(encoding="utf-8")
    if begin not in content or end not in content:
        raise SystemExit(f"{readme}: markers {begin} ... {end} not found")
    head, rest = content.split(begin, 1)
    _, tail = rest.split(end, 1)
    tmp = readme.with_suffix(".md.tmp")
    tmp.write_text(f"{head}{begin}\n{text.strip()}\n{end}{tail}", encoding="utf-8")
    os.replace(tmp, readme)
