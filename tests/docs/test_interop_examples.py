"""docs/examples/ragas-k*.jsonl, the RAGAS files of docs/guide/interop.md, are what the bundled
benchmark's runs at k=1 and k=3 look like in RAGAS's layout (``user_input``,
``retrieved_contexts``, ``response``, ``reference``, ``reference_contexts``,
``reference_context_ids``).  A question's reference contexts are the chunks of its gold
documents that hold at least one of its keywords (case-insensitive substrings), as a RAGAS test
set carries the passages each question was written from.

Regenerate them with ``RAGAUDIT_REGEN_EXAMPLES=1 uv run pytest`` on this file.
"""

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.corpus import load_corpus

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "src" / "ragaudit" / "benchmark"
EXAMPLES = ROOT / "docs" / "examples"


def ragas_lines(run_file: Path) -> str:
    chunks = chunk_documents(load_corpus(BENCH / "corpus"), 800, 100)
    texts = {c.chunk_id: c.text for c in chunks}
    rows = json.loads(run_file.read_text(encoding="utf-8"))["rows"]

    def passages(row):
        return [
            c.text
            for c in chunks
            if c.doc_id in row["gold_docs"]
            and any(k.lower() in c.text.lower() for k in row["keywords"])
        ]

    return "".join(
        json.dumps(
            {
                "user_input": r["question"],
                "retrieved_contexts": [texts[cid] for cid in r["context_ids"]],
                "response": r["answer"],
                "reference": r["reference_answer"],
                "reference_contexts": passages(r) if r["answerable"] else [],
                "reference_context_ids": r["gold_docs"],
            },
            ensure_ascii=False,
        )
        + "\n"
        for r in rows
    )


@pytest.mark.parametrize("k", [1, 3])
def test_ragas_examples_are_the_benchmark_runs(tmp_path, k):
    result = CliRunner().invoke(
        main,
        ["run", "--corpus", str(BENCH / "corpus"), "--golden", str(BENCH / "golden.yaml"),
         "--k", str(k), "--no-timing", "--quiet", "--out", str(tmp_path)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    expected = ragas_lines(tmp_path / f"k{k}_cs800.json")
    target = EXAMPLES / f"ragas-k{k}.jsonl"
    if os.environ.get("RAGAUDIT_REGEN_EXAMPLES"):
        target.write_text(expected, encoding="utf-8")
    assert target.read_text(encoding="utf-8") == expected
