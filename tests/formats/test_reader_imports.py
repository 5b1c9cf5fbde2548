"""Reading TREC files and scoring them imports neither pandas nor scipy.

A test of laziness, not of timing (issue 15): pandas' import alone costs more than reading a
small run, and ``pyarrow.array`` imports it to look for pandas objects, so the readers build
their pyarrow arrays from buffers.  It runs in a fresh interpreter, because other tests in
this process import pandas and scipy on purpose.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

_PROBE = textwrap.dedent(
    """
    import json, sys
    from ragaudit.data.formats import read_qrels, read_run
    from ragaudit.metrics import evaluate

    qrels_path, run_path, irregular_path = sys.argv[1:4]
    means = [
        evaluate(read_qrels(qrels_path), read_run(path), ["ndcg@10", "map"]).means
        for path in (run_path, irregular_path)
    ]
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("pandas", "scipy"))
    print(json.dumps({"heavy": heavy, "means": means}))
    """
)


def test_trec_files_are_read_and_scored_without_pandas_or_scipy(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 A 1\nq1 0 C 2\nq2 0 B 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 A 1 3.0 t\nq1 Q0 B 2 2.0 t\nq1 Q0 C 3 1.0 t\nq2 Q0 B 1 1.0 t\n")
    irregular = tmp_path / "irregular.txt"  # tabs after spaces: the exact, line-by-line path
    irregular.write_text(run.read_text().replace(" Q0", "\tQ0"))
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(qrels), str(run), str(irregular)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["heavy"] == []
    # By hand: q1 ranks A(1) B(0) C(2): AP = (1/1 + 2/3) / 2; q2 ranks B first: AP 1.
    expected_map = ((1 + 2 / 3) / 2 + 1) / 2
    for means in found["means"]:
        assert abs(means["map"] - expected_map) < 1e-12
