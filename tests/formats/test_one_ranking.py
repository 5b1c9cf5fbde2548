"""One TREC file, one ranking: ``evaluate`` and ``run --run-file`` read it with the same reader.

Regression test for the finding that ``read_run`` broke a score tie as trec_eval does while
``run --run-file`` kept file order.  The expected order is written by hand from trec_eval's
rule: score descending, ties by document id descending.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.data.formats import read_run
from ragaudit.exceptions import RagauditWarning

DATA = Path(__file__).parent.parent / "data" / "harness"
# q1 ties three documents at 1.0 and lists them in ascending id order.
RUN = (
    "q1 Q0 it-handbook 1 1.0 x\n"
    "q1 Q0 leave-policy 2 1.0 x\n"
    "q1 Q0 office-guide 3 1.0 x\n"
    "q1 Q0 travel-policy 4 0.5 x\n"
)
TREC_EVAL_ORDER = ["office-guide", "leave-policy", "it-handbook", "travel-policy"]


def test_evaluate_and_run_file_see_the_same_ranking(tmp_path):
    run_file = tmp_path / "run.trec"
    run_file.write_text(RUN, encoding="utf-8")
    assert read_run(run_file)["q1"] == TREC_EVAL_ORDER
    out = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("always", RagauditWarning)  # the CLI prints it on stderr
        result = CliRunner().invoke(
            main,
            [
                "run",
                "--corpus",
                str(DATA / "corpus"),
                "--golden",
                str(DATA / "golden.yaml"),
                "--run-file",
                str(run_file),
                "--k",
                "20",
                "--out",
                str(out),
                "--no-timing",
            ],
        )
    assert result.exit_code == 0, result.output
    assert "7 of 8 golden-set question(s) are missing from the run" in result.output
    (saved,) = [p for p in out.rglob("*.json") if "run-file" in p.name]
    rows = json.loads(saved.read_text(encoding="utf-8"))["rows"]
    q1 = next(row for row in rows if row["id"] == "q1")
    documents = list(dict.fromkeys(r["doc_id"] for r in q1["retrieved"]))
    assert documents == TREC_EVAL_ORDER
