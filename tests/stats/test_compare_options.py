"""``ragaudit.compare_runs(qrels=, cluster_by=, judge_repeats=)`` is what ``ragaudit compare``
prints: the same inputs give the same JSON document through the library and the command.

The command parses, calls the library once and renders; these tests pin that the library's
``to_dict()`` equals the command's ``--format json`` output (and its report, the command's
table), so nothing the command shows is computed outside the library.  The numbers themselves
are checked against statsmodels and by hand in test_noise_cli.py and test_cli_judged.py.
"""

from __future__ import annotations

import ast
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import ragaudit
from ragaudit.cli import main
from ragaudit.data.per_question import PerQuestionMetrics
from ragaudit.data.records import load_saved_run, write_saved_run
from ragaudit.exceptions import InputError, UnjudgedWarning
from ragaudit.reports.renderer import render

DATA = Path(__file__).parents[1] / "data" / "metrics"
QRELS, RUN = DATA / "qrels.txt", DATA / "run.txt"
SRC = Path(__file__).parents[2] / "src" / "ragaudit"


def _cli_json(*args: object) -> tuple[dict, str]:
    result = CliRunner().invoke(main, ["compare", *map(str, args), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def _library_json(*args: object, **options: object) -> dict:
    """The library's result through the same JSON encoder as the command (NaN, tuples)."""
    return json.loads(render(ragaudit.compare_runs(*args, **options).to_report(), "json"))


def _reversed_run(tmp_path: Path) -> Path:
    """run.txt with every question's ranking reversed: a second retrieval run."""
    rows = [line.split() for line in RUN.read_text().splitlines() if line.strip()]
    path = tmp_path / "reversed.txt"
    path.write_text("".join(f"{q} Q0 {d} {r} {-float(s)} rev\n" for q, _, d, r, s, _ in rows))
    return path


def _saved_runs(tmp_path: Path, repeats: bool) -> tuple[Path, Path]:
    """Two saved runs of 24 questions, 6 sources of 4, with 3 judge repeats when asked."""
    rng = np.random.default_rng(11)
    paths = []
    for name, p in (("a", 0.45), ("b", 0.7)):
        rows = []
        for i in range(24):
            votes = (rng.random(3) < p).tolist()
            judges: dict = {"correct": votes[0]}
            if repeats:
                judges["judge_repeat_verdicts"] = {"correct": votes}
            rows.append(
                {"id": f"q{i:02d}", "answerable": True, "gold_docs": [f"doc{i // 4}"],
                 "tags": ["even" if i % 2 == 0 else "odd"],
                 "retrieved": [{"chunk_id": f"c{i}", "doc_id": f"doc{i // 4}"}],
                 "judges": judges,
                 "metrics": {"correct": float(votes[0]), "score": (i % 5) / 4}}
            )  # fmt: skip
        path = tmp_path / f"{name}.json"
        write_saved_run(path, ragaudit.SavedRun.from_dict({"name": name, "config": {"k": 1},
                                                           "rows": rows}))  # fmt: skip
        paths.append(path)
    return paths[0], paths[1]


def test_qrels_library_equals_cli_json_and_warns_the_same(tmp_path):
    second = _reversed_run(tmp_path)
    cli, stderr = _cli_json("--qrels", QRELS, RUN, second, "-m", "ndcg@2", "-m", "P@3",
                            "--resamples", "300")  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        library = _library_json(RUN, second, ["ndcg@2", "P@3"], qrels=QRELS, n_resamples=300)
    assert library == cli
    # judged@k of both cutoffs is compared beside the requested metrics
    assert [m["metric"] for m in library["metrics"]] == ["ndcg@2", "P@3", "judged@2", "judged@3"]
    # the library warns each message once; the command prints exactly those lines
    messages = [str(w.message) for w in caught]
    assert len(messages) == len(set(messages)) >= 2
    assert any(w.category is UnjudgedWarning for w in caught)
    assert stderr.splitlines() == [f"ragaudit: warning: {m}" for m in messages]


def test_qrels_takes_loaded_labels_and_runs(tmp_path):
    second = _reversed_run(tmp_path)
    options = {"qrels": QRELS, "n_resamples": 200, "judged_threshold": 0.0, "judged_margin": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the missing-question warning; tested above
        from_files = ragaudit.compare_runs(RUN, second, "ndcg@2", **options)
        loaded = ragaudit.compare_runs(
            ragaudit.load_run(RUN), ragaudit.load_run(second), "ndcg@2",
            **{**options, "qrels": ragaudit.load_qrels(QRELS)},
        )  # fmt: skip
    assert [m.to_dict() for m in loaded.metrics] == [m.to_dict() for m in from_files.metrics]
    assert (from_files.name_a, from_files.name_b) == ("run", "reversed")


@pytest.mark.parametrize(
    ("options", "repeats"),
    [
        ({"cluster_by": "source"}, False),
        ({"cluster_by": "tag", "metrics": ["correct"]}, False),
        ({"judge_repeats": True}, True),
        ({"judge_repeats": True, "cluster_by": "source"}, True),
    ],
)
def test_cluster_by_and_judge_repeats_library_equals_cli_json(tmp_path, options, repeats):
    a, b = _saved_runs(tmp_path, repeats)
    args: list[object] = [a, b, "--resamples", "200"]
    if "cluster_by" in options:
        args += ["--cluster-by", options["cluster_by"]]
    if options.get("judge_repeats"):
        args.append("--judge-repeats")
    for metric in options.get("metrics", []):
        args += ["-m", metric]
    cli, stderr = _cli_json(*args)
    assert stderr == ""
    library = _library_json(a, b, n_resamples=200, **options)
    assert library == cli
    # loaded saved runs give the same document as their files
    loaded = _library_json(load_saved_run(a), load_saved_run(b), n_resamples=200, **options)
    assert loaded == cli
    keys = {"clustered"} if "cluster_by" in options else set()
    keys |= {"judge_noise"} if options.get("judge_repeats") else set()
    assert keys <= set(library)
    result = ragaudit.compare_runs(a, b, n_resamples=200, **options)
    assert set(result.noise) == keys and result.clustered == ("cluster_by" in options)
    # the table the command prints is the library's report, noise sections included
    table = CliRunner().invoke(main, ["compare", *map(str, args), "--full"]).stdout
    assert table == render(result.to_report(), "table")
    if "cluster_by" in options:
        assert f"Clustered by {options['cluster_by']}".upper() in table.upper()
    if options.get("judge_repeats"):
        assert "judge noise in correct" in table


def test_options_that_need_saved_runs_say_so(tmp_path):
    a = PerQuestionMetrics("a", {f"q{i}": {"correct": float(i % 2)} for i in range(6)})
    b = PerQuestionMetrics("b", {f"q{i}": {"correct": 1.0} for i in range(6)})
    with pytest.raises(InputError, match=r"^cluster_by: expected saved runs .* found PerQuestion"):
        ragaudit.compare_runs(a, b, cluster_by="source")
    with pytest.raises(InputError, match=r"^judge_repeats: expected saved runs"):
        ragaudit.compare_runs(a, b, judge_repeats=True)
    with pytest.raises(InputError, match="cluster_by and judge_repeats need saved runs"):
        ragaudit.compare_runs(RUN, RUN, qrels=QRELS, cluster_by="source")
    with pytest.raises(InputError, match=r"^run_a: with qrels, expected a retrieval run"):
        ragaudit.compare_runs(a, b, qrels=QRELS)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_compare_command_is_parse_call_render():
    """cli/compare.py imports no other command and no computation beyond its entry points:
    ``ragaudit.compare_runs`` for two runs, ``compare_directory`` for ``--all``."""
    imported = {m for m in _imports(SRC / "cli" / "compare.py") if m.startswith("ragaudit")}
    assert not {
        m for m in imported if m.startswith("ragaudit.cli.") and m != "ragaudit.cli._options"
    }
    assert {m for m in imported if m.startswith("ragaudit.diagnose")} <= {
        "ragaudit.diagnose.compare"
    }
    # stats only for click's choices, the gate's p-value format and a type
    computing = {m for m in imported if m.startswith(("ragaudit.stats", "ragaudit.metrics"))}
    assert computing <= {"ragaudit.stats.options", "ragaudit.stats.verdicts",
                         "ragaudit.stats.compare"}  # fmt: skip
