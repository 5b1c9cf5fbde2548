"""The id lists of ``funnel`` and ``compare`` are cut in the text output, whole in JSON.

Two hand-built saved runs of 60 questions: in run A question i retrieves its gold document
when i % 3 == 0, in run B when i % 2 == 0, so by construction 40 questions of A die at
retrieval (i % 3 != 0) and 30 questions differ on hit@k between A and B (i % 6 in {2, 3, 4}).
The expected ids below are those formulas, not the program's output.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.reports.id_lists import ALL_IDS_HINT, SHOWN_IDS

N = 60


def _row(i: int, hit: bool) -> dict:
    doc = "G" if hit else "X"
    return {
        "id": f"q{i:02d}",
        "answerable": True,
        "gold_docs": ["G"],
        "retrieved": [{"chunk_id": f"{doc}#0", "doc_id": doc, "rank": 1}],
        "judges": {"abstained": False, "correct": hit, "evidence_in_context": hit},
        "metrics": {"hit@k": float(hit), "correct": hit},
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("caps")
    paths = []
    for name, every in (("a", 3), ("b", 2)):
        doc = {"format": "ragaudit.run", "format_version": 1, "name": name,
               "config": {"k": 1}, "rows": [_row(i, i % every == 0) for i in range(N)]}  # fmt: skip
        path = folder / f"{name}.json"
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    return paths


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


DIED_A = [f"q{i:02d}" for i in range(N) if i % 3 != 0]  # ids sort as numbers: q00..q59
DIFFER = [f"q{i:02d}" for i in range(N) if i % 6 in (2, 3, 4)]


def _listed(line: str) -> tuple[list[str], int]:
    """The ids a line shows and the count of the rest it states (0 when none)."""
    more = re.search(r" and ([\d,]+) more", line)
    ids = re.findall(r"\bq\d\d\b", line)
    return ids, int(more.group(1).replace(",", "")) if more else 0


def test_funnel_shows_the_first_ids_and_counts_the_rest(runs):
    assert len(DIED_A) == 40 > SHOWN_IDS
    line = next(x for x in _invoke("funnel", runs[0]).splitlines() if "1-retrieval" in x)
    ids, more = _listed(line)
    assert ids == DIED_A[:SHOWN_IDS] and more == len(DIED_A) - SHOWN_IDS
    assert ALL_IDS_HINT in line
    every = next(x for x in _invoke("funnel", runs[0], "--all-ids").splitlines()
                 if "1-retrieval" in x)  # fmt: skip
    assert _listed(every) == (DIED_A, 0) and ALL_IDS_HINT not in every


def test_funnel_json_lists_every_id_with_or_without_the_flag(runs):
    cut = json.loads(_invoke("funnel", runs[0], "--format", "json"))
    whole = json.loads(_invoke("funnel", runs[0], "--format", "json", "--all-ids"))
    assert cut == whole
    assert cut["died"]["1-retrieval"] == DIED_A


def test_compare_cuts_the_questions_that_differ(runs):
    assert len(DIFFER) == 30 > SHOWN_IDS
    out = _invoke("compare", *runs, "-m", "hit@k", "--full")
    (line,) = [x for x in out.splitlines() if "questions that differ:" in x]
    ids, more = _listed(line)
    assert ids == DIFFER[:SHOWN_IDS] and more == len(DIFFER) - SHOWN_IDS
    listing = _invoke("compare", *runs, "-m", "hit@k", "--all-ids", "--full")
    (every,) = [x for x in listing.splitlines()
                if "questions that differ:" in x]  # fmt: skip
    assert _listed(every) == (DIFFER, 0)
    cut = json.loads(_invoke("compare", *runs, "-m", "hit@k", "--format", "json"))
    whole = json.loads(_invoke("compare", *runs, "-m", "hit@k", "--format", "json", "--all-ids"))
    assert cut == whole
    assert cut["metrics"][0]["mcnemar"]["discordant_ids"] == DIFFER


def test_funnel_of_two_runs_cuts_changed_and_moved(runs):
    out = _invoke("funnel", *runs)
    stage1 = next(x for x in out.splitlines() if x.strip().startswith("1-retrieval"))
    # stage 1 passed only under A (-q) where i % 3 == 0 and i % 2 != 0, only under B (+q)
    # where i % 2 == 0 and i % 3 != 0: 10 and 20 questions, listed -q first
    changed = [f"-q{i:02d}" for i in range(N) if i % 3 == 0 and i % 2] + [
        f"+q{i:02d}" for i in range(N) if i % 2 == 0 and i % 3
    ]
    shown = re.findall(r"[-+]q\d\d\b", stage1)
    assert shown == changed[:SHOWN_IDS]
    assert f"and {len(changed) - SHOWN_IDS} more" in stage1
    assert f"{len(changed) - SHOWN_IDS} more moved (the first {SHOWN_IDS} are listed)" in out
    every = _invoke("funnel", *runs, "--all-ids")
    stage1 = next(x for x in every.splitlines() if x.strip().startswith("1-retrieval"))
    assert re.findall(r"[-+]q\d\d\b", stage1) == changed and "more moved" not in every
    cut = json.loads(_invoke("funnel", *runs, "--format", "json"))
    assert cut == json.loads(_invoke("funnel", *runs, "--format", "json", "--all-ids"))
    assert len(cut["moved"]) == len(changed)


def test_the_flag_is_documented_in_help():
    for command in ("funnel", "compare"):
        assert "--all-ids" in _invoke(command, "--help")
