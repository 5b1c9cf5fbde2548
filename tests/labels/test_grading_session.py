"""The grading session of ``labels verdicts`` as a library object, without a terminal.

Expected orders come from numpy's documented ``default_rng(seed).permutation`` written out
here; the verdict values are the keystrokes typed (by hand): c = 1.0, w = 0.0, s = None.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragaudit.data.human_grades import read_human_grades_file
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError
from ragaudit.labels import GradingSession

IDS = [f"q{i}" for i in range(1, 7)]


def _run(name="run", answer_suffix=""):
    rows = [
        {"id": q, "retrieved": [], "answer": f"answer {q}{answer_suffix}",
         "metrics": {"correct": i % 2}}
        for i, q in enumerate(IDS)
    ]  # fmt: skip
    return SavedRun.from_dict({"name": name, "config": {"k": 1}, "rows": rows})


def _keys(*typed):
    it = iter(typed)

    def ask(prompt, choices):
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None

    return ask


def _quiet(*_):
    return None


def test_order_is_the_seeded_permutation_and_each_verdict_is_saved(tmp_path):
    path = tmp_path / "h.jsonl"
    session = GradingSession.open(_run(), path, sample_size=4, seed=5)
    expected = [IDS[i] for i in np.random.default_rng(5).permutation(len(IDS))][:4]
    assert list(session.order) == expected
    shown = []
    summary = session.grade(lambda q: q, ask=_keys("c", "w", "s"), show=shown.append)
    assert (summary.graded, summary.skipped, summary.stopped) == (2, 1, True)
    on_disk = read_human_grades_file(path)
    assert dict(on_disk.entries) == {expected[0]: 1.0, expected[1]: 0.0, expected[2]: None}
    assert (on_disk.sample.seed, on_disk.sample.n, on_disk.sample.of) == (5, 4, 6)
    assert (session.graded, session.skipped, session.to_go) == (2, 1, 1)


def test_resume_keeps_seed_and_sample_and_asks_only_the_rest(tmp_path):
    path = tmp_path / "h.jsonl"
    first = GradingSession.open(_run(), path, sample_size=3, seed=2)
    first.grade(lambda q: q, ask=_keys("c"), show=_quiet)
    second = GradingSession.open(_run(), path)
    assert second.sample.seed == 2 and second.sample.n == 3 and second.order == first.order
    described = []
    second.grade(lambda q: described.append(q) or q, ask=_keys("w", "w"), show=_quiet)
    assert described == list(first.order[1:])
    assert dict(read_human_grades_file(path).entries) == {
        first.order[0]: 1.0, first.order[1]: 0.0, first.order[2]: 0.0
    }  # fmt: skip


def test_two_sessions_on_one_file_keep_each_others_verdicts(tmp_path):
    path = tmp_path / "h.jsonl"
    one = GradingSession.open(_run(), path, seed=0)
    one.save()
    two = GradingSession.open(_run(), path)
    two.grade(lambda q: q, ask=_keys("c", "c"), show=_quiet)  # order[0] and order[1]
    asked = []
    one.grade(lambda q: asked.append(q) or q, ask=_keys("w"), show=_quiet)
    # one learns of two's verdicts at its first save: it asks order[0] (its own verdict, the
    # later save, wins there), then never asks order[1], which two graded
    assert asked == [one.order[0], one.order[2]]
    assert dict(read_human_grades_file(path).entries) == {one.order[0]: 0.0, one.order[1]: 1.0}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sample_size": 7}, r"--sample 7: expected at most the run's 6 judged"),
        ({"seed": 9}, r"--seed 9: .* was drawn with seed 1"),
    ],
)
def test_bad_resume_options_are_refused(tmp_path, kwargs, match):
    path = tmp_path / "h.jsonl"
    GradingSession.open(_run(), path, sample_size=2, seed=1).save()
    with pytest.raises(InputError, match=match):
        GradingSession.open(_run(), path, **kwargs)


def test_another_run_or_a_changed_answer_or_a_non_jsonl_file_is_refused(tmp_path):
    path = tmp_path / "h.jsonl"
    session = GradingSession.open(_run(), path, seed=1)
    session.grade(lambda q: q, ask=_keys("c"), show=_quiet)
    with pytest.raises(InputError, match=r"expected verdicts on run 'other'"):
        GradingSession.open(_run("other"), path)
    with pytest.raises(InputError, match=r"answer"):
        GradingSession.open(_run(answer_suffix=" (regenerated)"), path)
    with pytest.raises(InputError, match=r"--out: expected a \.jsonl file, found '.*h\.json'"):
        GradingSession.open(_run(), tmp_path / "h.json")
