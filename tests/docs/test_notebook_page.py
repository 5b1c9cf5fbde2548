"""docs/guide/notebook.md runs as written: its Python blocks, in order, in one namespace, in a
directory where ``ragaudit demo`` has just written its runs.  The output block after a Python
block (``<!-- notebook: output -->``) is what that block prints, and the audit it builds has
the same numbers as the demo's own JSON (``demo --format json``)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "notebook.md"
BLOCK = re.compile(r"(<!-- notebook: output -->\n)?```(\w*)\n(.*?)\n```", re.DOTALL)


def blocks(text: str) -> list[tuple[str, str, bool]]:
    """``(language, code, is_output)`` of every fenced block, in order."""
    return [(m.group(2), m.group(3), bool(m.group(1))) for m in BLOCK.finditer(text)]


def test_the_parser_pairs_code_with_its_output() -> None:
    text = "```python\nprint(1)\n```\n<!-- notebook: output -->\n```text\n1\n```\n"
    assert blocks(text) == [("python", "print(1)", False), ("text", "1", True)]


@pytest.mark.slow
def test_the_notebook_page_runs_and_equals_the_demos_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pandas")  # the page calls to_pandas()
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["demo", "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    demo = json.loads(result.stdout)

    namespace: dict[str, object] = {}
    printed = ""
    ran = outputs = 0
    for language, code, is_output in blocks(PAGE.read_text(encoding="utf-8")):
        if is_output:
            assert printed.rstrip("\n") == code, "the page's output sample is stale"
            outputs += 1
        elif language == "python":
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                exec(compile(code, str(PAGE), "exec"), namespace)  # our own page, run as written
            printed = buffer.getvalue()
            ran += 1
    assert ran >= 2 and outputs >= 1

    audit = namespace["audit"]
    expected = {key: value for key, value in demo.items() if key not in ("benchmark", "files")}
    assert audit.to_dict() == expected  # type: ignore[attr-defined]
    # the objects the page prints are the audit's, so their numbers are the demo's too
    assert audit.runs[0].funnel.to_dict() == demo["runs"][0]["funnel"]  # type: ignore[attr-defined]
    assert audit.runs[0].bias.to_dict() == demo["runs"][0]["label_bias"]  # type: ignore[attr-defined]
    comparison = audit.pairs[0].comparison.to_dict()  # type: ignore[attr-defined]
    assert {k: v for k, v in demo["comparisons"][0].items() if k in comparison} == comparison
