"""The hand-written judge probes (``benchmarks/probes/``): load one, judge it, tabulate.

Each probe is a set of answers to the bundled benchmark's questions, each labelled by a
careful reader and frozen before any judge ran on it: v2 (292 answers,
``benchmarks/probes/README.md``), v3 (320 answers, written blind by another session,
``benchmarks/probes/README_v3.md``; the judge was tuned on v3 from commit 863edc7 on, so
its figures are no longer held-out) and v4 (310 LLM-style answers, written blind by a third,
``benchmarks/probes/README_v4.md``) and v5 (315 answers in several generators' styles,
written blind by a fourth, ``benchmarks/probes/README_v5.md``); each README says who wrote it,
how and when, and which were tuned on.
:data:`PROBES` lists them with their freeze commits.  :func:`judge_probe` runs the offline
judge on every answer with the gold documents' full text as the context; :func:`probe_table`
reports, per kind:

* decided share = answers whose ``correct`` verdict is True or False (None is undecided);
* decided accuracy = decided answers whose verdict equals the reader's label;
* refusals scored correct on answerable questions (the issue-31 rule: must be 0);
* the abstention detector against the probe's refusals.

Each rate has its Clopper-Pearson exact 95% interval (Clopper & Pearson 1934, through
:func:`ragaudit.stats.intervals.proportion_interval`).  Rows labelled ``ambiguous`` (the reader
was unsure) are counted but left out of every rate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ragaudit.data.golden import GoldenQuestion, load_golden
from ragaudit.exceptions import FormatError
from ragaudit.stats.intervals import proportion_interval

ROOT = Path(__file__).resolve().parent.parent
PROBE_DIR = ROOT / "benchmarks" / "probes"
LABELS = ("correct", "wrong", "ambiguous")
KINDS = ("paraphrase", "near_miss", "refusal")
FIELDS = {"id", "question", "answer", "label", "kind", "subkind", "note"}
REQUIRED = FIELDS - {"note"}
#: Issue 31's bar for the frozen probe (shown, never asserted by a test).
TARGET_ACCURACY, TARGET_DECIDED = 0.95, 0.80


@dataclass(frozen=True)
class Probe:
    """A frozen probe file and the commit that froze it (its README, "Freeze")."""

    name: str
    path: Path
    freeze: str
    tuned_since: str = ""  # the commit from which the judge was tuned on it (not held-out)


#: Every frozen probe, oldest first.
PROBES = (
    # v2's tuning began before 9824507, the commit that recorded it in README.md
    Probe("v2", PROBE_DIR / "judge_probe_v2.yaml", "488fd03", tuned_since="9824507"),
    Probe("v3", PROBE_DIR / "judge_probe_v3.yaml", "4b0461c", tuned_since="863edc7"),
    Probe("v4", PROBE_DIR / "judge_probe_v4.yaml", "9260a32", tuned_since="738b67a"),
    Probe("v5", PROBE_DIR / "judge_probe_v5.yaml", "37ec1ed"),
)
PROBE = PROBES[0].path


@dataclass(frozen=True)
class ProbeRow:
    """One hand-written answer with the reader's label."""

    id: str
    question: str
    answer: str
    label: str
    kind: str
    subkind: str
    note: str = ""


@dataclass(frozen=True)
class Judged:
    """A probe row, whether its question is answerable, and the offline verdicts."""

    row: ProbeRow
    answerable: bool
    correct: bool | None
    abstained: bool | None


def load_probe(path: Path = PROBE, question_ids: Sequence[str] | None = None) -> list[ProbeRow]:
    """The probe's rows, validated: a bad field raises FormatError naming row and field."""
    where = str(path)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise FormatError(f"expected a list of rows, found {type(data).__name__}", path=where)
    rows: list[ProbeRow] = []
    seen: set[str] = set()
    for i, item in enumerate(data):
        at = f"rows[{i}]"
        if not isinstance(item, dict):
            raise FormatError(f"expected a mapping, found {type(item).__name__}", path=where,
                              field=at)  # fmt: skip
        missing, unknown = REQUIRED - item.keys(), item.keys() - FIELDS
        if missing or unknown:
            what = "missing " + ", ".join(sorted(missing)) if missing else ""
            what += ("; " if missing and unknown else "") + (
                "unknown " + ", ".join(sorted(unknown)) if unknown else ""
            )
            raise FormatError(what, path=where, field=at)
        for key in FIELDS & item.keys():
            if not isinstance(item[key], str) or not item[key].strip():
                raise FormatError(f"expected a non-empty string, found {item[key]!r}",
                                  path=where, field=f"{at}.{key}")  # fmt: skip
        checks = (("label", LABELS), ("kind", KINDS))
        for key, allowed in checks:
            if item[key] not in allowed:
                raise FormatError(f"expected one of {', '.join(allowed)}, found {item[key]!r}",
                                  path=where, field=f"{at}.{key}")  # fmt: skip
        if item["id"] in seen:
            raise FormatError(f"duplicate id {item['id']!r}", path=where, field=f"{at}.id")
        if question_ids is not None and item["question"] not in question_ids:
            raise FormatError(f"no question {item['question']!r} in the golden set", path=where,
                              field=f"{at}.question")  # fmt: skip
        seen.add(item["id"])
        rows.append(ProbeRow(**item))
    return rows


def bundled_golden() -> tuple[dict[str, GoldenQuestion], dict[str, str]]:
    """The bundled golden set by id, and each corpus document's text by doc id."""
    from ragaudit.pipeline.bundled import benchmark_paths
    from ragaudit.pipeline.corpus import load_corpus

    with benchmark_paths() as (corpus, golden):
        questions = {q.id: q for q in load_golden(golden)}
        docs = {d.doc_id: d.text for d in load_corpus(corpus)}
    return questions, docs


Judge = Callable[..., Mapping[str, Any]]


def judge_probe(judge: Judge | None = None, path: Path = PROBE) -> list[Judged]:
    """Every probe answer judged with its question's gold documents as the context.

    ``judge`` takes the keyword arguments of
    :func:`ragaudit.judges.offline.judge_offline` (the default) and returns its verdicts.
    """
    if judge is None:
        from ragaudit.judges.offline import judge_offline

        judge = judge_offline
    questions, docs = bundled_golden()
    judged: list[Judged] = []
    for row in load_probe(path, list(questions)):
        q = questions[row.question]
        verdicts = judge(
            answer=row.answer, answerable=q.answerable, reference_answer=q.answer,
            keywords=list(q.keywords), context_texts=[docs[d] for d in q.sources],
            question=q.question, context_docs=list(q.sources), sources=list(q.sources),
        )  # fmt: skip
        judged.append(Judged(row, q.answerable, verdicts.get("correct"),
                             verdicts.get("abstained")))  # fmt: skip
    return judged


def rate(k: int, n: int) -> str:
    """``k/n = p [low, high]`` with the Clopper-Pearson 95% interval."""
    if n == 0:
        return "n/a (none)"
    ci = proportion_interval(k, n).confidence_interval
    return f"{k}/{n} = {k / n:.3f} [{ci.low:.3f}, {ci.high:.3f}]"


@dataclass(frozen=True)
class Counts:
    """Labelled rows of a group, how many the judge decided, and how many of those agree."""

    labelled: int
    decided: int
    agree: int

    @classmethod
    def of(cls, judged: Sequence[Judged]) -> Counts:
        labelled = [j for j in judged if j.row.label != "ambiguous"]
        decided = [j for j in labelled if j.correct is not None]
        agree = sum(1 for j in decided if j.correct == (j.row.label == "correct"))
        return cls(len(labelled), len(decided), agree)

    def meets(self) -> bool:
        """Issue 31's bar: decided share and decided accuracy (point estimates)."""
        return (self.decided >= TARGET_DECIDED * self.labelled
                and self.agree >= TARGET_ACCURACY * self.decided and self.decided > 0)  # fmt: skip


def _groups(judged: Sequence[Judged]) -> dict[str, list[Judged]]:
    groups: dict[str, list[Judged]] = {
        "paraphrase (reader: correct)": [j for j in judged if j.row.kind == "paraphrase"],
        "near miss (reader: wrong)": [j for j in judged if j.row.kind == "near_miss"],
        "refusal, unanswerable question (reader: correct)": [
            j for j in judged if j.row.kind == "refusal" and not j.answerable
        ],
        "refusal, answerable question (reader: wrong)": [
            j for j in judged if j.row.kind == "refusal" and j.answerable
        ],
    }
    groups["**all**"] = list(judged)
    return groups


def probe_table(judged: Sequence[Judged], probe: Probe = PROBES[0]) -> list[str]:
    """The markdown report: per kind, decided share and decided accuracy; refusal checks."""
    ambiguous = sum(1 for j in judged if j.row.label == "ambiguous")
    where = probe.path.relative_to(ROOT).as_posix()
    lines = [
        f"**Hand-written probe {probe.name}: {where} ({len(judged)} answers,"
        f" frozen at {probe.freeze} before any judge ran; {ambiguous} ambiguous left out"
        + (
            f"; the judge was tuned on it from {probe.tuned_since} on: tuning figures, not held-out"
            if probe.tuned_since
            else ""
        )
        + ")**",
        "",
        "| kind | labelled | decided share [95% CI] | decided accuracy [95% CI] | undecided |",
        "|---|---|---|---|---|",
    ]
    for name, rows in _groups(judged).items():
        c = Counts.of(rows)
        lines.append(f"| {name} | {c.labelled} | {rate(c.decided, c.labelled)} | "
                     f"{rate(c.agree, c.decided)} | {c.labelled - c.decided} |")  # fmt: skip
    refusals = [j for j in judged if j.row.kind == "refusal" and j.answerable]
    scored = sum(1 for j in refusals if j.correct is True)
    n_refusals = sum(1 for j in judged if j.row.kind == "refusal")
    detected = sum(1 for j in judged if j.row.kind == "refusal" and j.abstained)
    answers = [j for j in judged if j.row.kind != "refusal"]
    flagged = sum(1 for j in answers if j.abstained)
    met = "met" if Counts.of(judged).meets() and scored == 0 else "NOT met"
    lines += [
        "",
        f"Refusals scored correct on answerable questions: {scored} of {len(refusals)} "
        "(must be 0). Abstention detector: refusals detected "
        f"{rate(detected, n_refusals)}; answers (paraphrases and near misses) taken for "
        f"refusals {rate(flagged, len(answers))}.",
        "",
        f"Target of issue 31 on this probe: {met} (decided accuracy >= {TARGET_ACCURACY:.0%}, "
        f"decided share >= {TARGET_DECIDED:.0%}, no refusal scored correct).",
    ]
    return lines


def subkind_table(judged: Sequence[Judged]) -> list[str]:
    """Per sub-kind: labelled, decided, agreeing, and the disagreeing probe ids."""
    lines = ["| kind / subkind | labelled | decided | agree | disagree (id: judge says) |",
             "|---|---|---|---|---|"]  # fmt: skip
    keys = Counter((j.row.kind, j.row.subkind) for j in judged if j.row.label != "ambiguous")
    for kind, sub in sorted(keys):
        rows = [j for j in judged if (j.row.kind, j.row.subkind) == (kind, sub)
                and j.row.label != "ambiguous"]  # fmt: skip
        decided = [j for j in rows if j.correct is not None]
        wrong = [j for j in decided if j.correct != (j.row.label == "correct")]
        ids = ", ".join(f"{j.row.id}: {j.correct}" for j in wrong)
        lines.append(f"| {kind} / {sub} | {len(rows)} | {len(decided)} | "
                     f"{len(decided) - len(wrong)} | {ids} |")  # fmt: skip
    return lines
