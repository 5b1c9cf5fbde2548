"""plan --effect / --runs: questions needed, from the exact power and Connor's approximation."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import norm

from ragaudit.cli import main
from ragaudit.data.records import write_saved_run
from ragaudit.data.saved_run import SavedRun
from ragaudit.exceptions import InputError
from ragaudit.stats.power import mcnemar_power
from ragaudit.stats.sample_size import design_effect_from_icc, questions_needed


def _connor(effect, disagree, power=0.8, alpha=0.05):
    z_a, z_b = norm.ppf(1 - alpha / 2), norm.ppf(power)
    return (z_a * np.sqrt(disagree) + z_b * np.sqrt(disagree - effect**2)) ** 2 / effect**2


@pytest.mark.parametrize(("effect", "disagree"), [(0.1, 0.2), (0.05, 0.2), (0.03, 0.1), (0.2, 0.4)])
def test_first_n_reaching_the_power_and_close_to_connor(effect, disagree):
    result = questions_needed(effect, disagree)
    n = result.n_independent
    assert mcnemar_power(n, disagree, effect) >= 0.8 > mcnemar_power(n - 1, disagree, effect)
    assert result.power == mcnemar_power(n, disagree, effect)
    assert n == pytest.approx(_connor(effect, disagree), rel=0.15)
    assert result.n == n


def test_design_effect_inflates_n():
    assert design_effect_from_icc(5, 0.3) == pytest.approx(1 + 4 * 0.3)
    base = questions_needed(0.1, 0.2)
    clustered = questions_needed(0.1, 0.2, design_effect=2.2)
    assert clustered.n_independent == base.n_independent
    assert clustered.n == int(np.ceil(base.n_independent * 2.2))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"effect": 0.3, "disagree": 0.2}, "an effect cannot exceed the share"),
        ({"effect": 0.0, "disagree": 0.2}, "expected 0 < |effect|"),
        ({"effect": 0.1, "disagree": 0.2, "design_effect": 0.5}, "design effect: expected"),
    ],
)
def test_errors(kwargs, message):
    with pytest.raises(InputError, match=message.replace("|", r"\|")):
        questions_needed(**kwargs)


def _run(path, name, values, sources):
    rows = [
        {"id": f"q{i:02d}", "question": "?", "answerable": True, "retrieved": [],
         "gold_docs": [s], "metrics": {"correct": bool(v)}}
        for i, (v, s) in enumerate(zip(values, sources, strict=True))
    ]  # fmt: skip
    write_saved_run(path, _run_model(name, rows))
    return path


def test_plan_from_two_runs(tmp_path):
    rng = np.random.default_rng(4)
    a = rng.integers(0, 2, 40)
    b = np.where(rng.random(40) < 0.3, 1, a)
    sources = [f"d{i // 4}" for i in range(40)]
    pa, pb = _run(tmp_path / "a.json", "a", a, sources), _run(tmp_path / "b.json", "b", b, sources)
    out = CliRunner().invoke(main, ["plan", "--runs", str(pa), str(pb), "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    disagree, effect = float(np.mean(a != b)), float(np.mean(b - a))
    assert data["disagree"] == pytest.approx(disagree)
    assert data["observed_effect"] == pytest.approx(effect)
    assert data["n_independent"] == questions_needed(effect, disagree).n_independent
    icc = CliRunner().invoke(main, ["plan", "--effect", "0.1", "--disagree", "0.2", "--icc", "0.3",
                                    "--cluster-size", "5"])  # fmt: skip
    assert "370 questions with design effect 2.20" in icc.output
    bad = CliRunner().invoke(main, ["plan", "--cluster-by", "source"])
    assert bad.exit_code == 2 and "needs --runs A B" in bad.output


def _run_model(name, rows):
    return SavedRun.from_dict({"name": name, "config": {"k": 1}, "rows": rows})
