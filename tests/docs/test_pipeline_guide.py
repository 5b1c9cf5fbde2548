"""Every Python block of docs/guide/pipeline.md runs as written, prints the text block that
follows it, and writes the saved run ``ragaudit run`` writes for the same retrieval and answers.

Each block runs in its own Python process (LangChain and LlamaIndex set process-wide state) from
a sandbox directory that links the repository's ``src``, so its relative paths work as from the
repository root and ``ragaudit-results/`` lands in the sandbox.  Sockets are disabled in that
process: the examples must run offline.  Blocks that import langchain_core or llama_index are
skipped when the ``integrations`` dependency group is not installed (CI installs it).

The comparison: the plain-function example (ragaudit's BM25 + extractive reader) against
``ragaudit run --k 3`` itself; the LangChain and LlamaIndex examples against ``ragaudit run
--k 3 --run-file`` given their retrieval (chunk ids and scores) as a TREC run, with the same
extractive reader answering.  Rows must be equal key for key except the timing
(``latency_ms``) and the live run's own ``context_match`` counts; the summaries must be equal.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.records import load_saved_run
from ragaudit.pipeline.config import RunConfig
from ragaudit.pipeline.harness import run_pipeline

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide" / "pipeline.md"
BENCH = ROOT / "src" / "ragaudit" / "benchmark"
OFFLINE = (
    "import socket\n"
    "def _offline(*args, **kwargs):\n"
    "    raise OSError('docs/guide/pipeline.md examples must not use the network')\n"
    "socket.socket.connect = socket.socket.connect_ex = _offline\n"
    "socket.getaddrinfo = socket.create_connection = _offline\n"
)
FRAMEWORKS = ("langchain_core", "llama_index")


def blocks(text: str) -> list[tuple[int, str, str | None]]:
    """``(line, code, expected output or None)`` of each Python block, in order."""
    found = re.finditer(r"^```python\n(.*?)^```\n(\s*```text\n(.*?)^```\n)?", text, re.M | re.S)
    return [
        (text[: m.start()].count("\n") + 1, m.group(1), m.group(3) if m.group(2) else None)
        for m in found
    ]


BLOCKS = blocks(GUIDE.read_text(encoding="utf-8"))


def test_the_guide_has_the_examples():
    codes = [code for _, code, _ in BLOCKS]
    assert any("langchain_core" in c for c in codes) and any("llama_index" in c for c in codes)
    assert all(expected is not None for _, _, expected in BLOCKS)


def without(row, *keys):
    return {key: value for key, value in row.items() if key not in keys}


def assert_same_run(live, reference):
    assert [r["id"] for r in live.rows] == [r["id"] for r in reference.rows]
    for mine, theirs in zip(live.rows, reference.rows, strict=True):
        assert without(mine, "latency_ms", "context_match") == without(theirs, "latency_ms")
    assert live.summary == reference.summary


def trec_lines(saved) -> str:
    return "".join(
        f"{row['id']} Q0 {hit['chunk_id']} {hit['rank']} {hit['score']!r} live\n"
        for row in saved.rows
        for hit in row["retrieved"]
    )


@pytest.fixture(scope="module")
def bm25_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bm25")
    return run_pipeline(RunConfig(BENCH / "corpus", BENCH / "golden.yaml", k=3, out_dir=out,
                                  record_latency=False))  # fmt: skip


@pytest.mark.parametrize(("line", "code", "expected"), BLOCKS, ids=[f"line{b[0]}" for b in BLOCKS])
def test_python_block(tmp_path, bm25_run, line, code, expected):
    for framework in FRAMEWORKS:
        if f"from {framework}" in code and importlib.util.find_spec(framework) is None:
            pytest.skip(f"{framework} not installed (uv sync --group integrations)")
    (tmp_path / "src").symlink_to(ROOT / "src", target_is_directory=True)
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE + code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"docs/guide/pipeline.md:{line}:\n{done.stderr}"
    assert done.stdout == expected, f"docs/guide/pipeline.md:{line}: printed output differs"
    written = {p.stem: p for p in (tmp_path / "ragaudit-results").glob("*.json")}
    if "my_rag" in written:
        assert_same_run(load_saved_run(written["my_rag"]), bm25_run)
        for command in (
            ["funnel", str(written["my_rag"])],
            ["report", str(written["my_rag"]), "--out", str(tmp_path / "r.html")],
        ):
            result = CliRunner().invoke(main, command)  # everything after the run works
            assert result.exit_code == 0, result.output
    for name in ("langchain", "llama_rag"):
        if name not in written:
            continue
        live = load_saved_run(written[name])
        assert len(live.rows) == 60 and all(r["retrieved"] for r in live.rows)
        run_file = tmp_path / f"{name}.trec"
        run_file.write_text(trec_lines(live), encoding="utf-8")
        reference = run_pipeline(
            RunConfig(BENCH / "corpus", BENCH / "golden.yaml", k=3, run_file=run_file,
                      out_dir=tmp_path / "reference", record_latency=False)
        )  # fmt: skip
        assert_same_run(live, reference)
        assert (live.config["retriever"], reference.config["retriever"]) == ("pipeline", "run-file")
