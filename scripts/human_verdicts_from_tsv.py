"""Write human-verdict JSONL files (``ragaudit calibrate --human``) from a grader's TSV sheet.

The verdicts are the grader's reading, typed into the sheet by hand; this script only
copies them into the format ``ragaudit labels verdicts`` writes: a header line, then one
line per question in the seed-0 order ``labels verdicts`` presents them in, each with the
SHA-256 of the graded answer (:func:`ragaudit.data.human_verdicts.answer_fingerprint`)
and the grader's note where the verdict needed judgement.

Sheet: ``qid<TAB>correct<TAB>evidence<TAB>faithful<TAB>note`` with 1/0, and ``-`` for the
evidence of an unanswerable question; lines starting with ``#`` are comments.

    uv run python scripts/human_verdicts_from_tsv.py SHEET.tsv RUN.json OUT_DIR
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ragaudit.data.human_verdicts import (
    HumanVerdicts,
    VerdictSample,
    answer_fingerprint,
    dump_human_verdicts,
)
from ragaudit.data.records import load_saved_run
from ragaudit.labels.verdicts import sample_order

FIELDS = ("correct", "evidence_in_context", "faithful")
SEED = 0


def read_sheet(path: Path) -> dict[str, dict[str, str]]:
    sheet: dict[str, dict[str, str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        qid, correct, evidence, faithful, *rest = line.split("\t")
        sheet[qid] = {
            "correct": correct,
            "evidence_in_context": evidence,
            "faithful": faithful,
            "note": rest[0] if rest else "",
        }
    return sheet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sheet", type=Path)
    parser.add_argument("run", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--how", default="", help="sample.how text of the header")
    args = parser.parse_args()
    saved = load_saved_run(args.run)
    sheet = read_sheet(args.sheet)
    questions = {q.id: q for q in saved.questions}
    if set(sheet) != set(questions):
        raise SystemExit(f"sheet ids differ from the run's: {sorted(set(sheet) ^ set(questions))}")
    args.out.mkdir(parents=True, exist_ok=True)
    for field in FIELDS:
        # The questions the verdict applies to: evidence only for answerable ones.
        population = [
            q.id for q in saved.questions if field != "evidence_in_context" or q.answerable
        ]
        order = sample_order(population, SEED)
        entries = tuple((qid, float(int(sheet[qid][field]))) for qid in order)
        answers = tuple((qid, answer_fingerprint(questions[qid].answer), 0) for qid in order)
        sample = VerdictSample(True, len(order), len(population), SEED, args.how)
        text = dump_human_verdicts(
            HumanVerdicts(entries, field, saved.name, sample, answers=answers)
        )
        lines = text.splitlines()
        out = [lines[0]]
        for line in lines[1:]:
            row = json.loads(line)
            note = sheet[row["id"]]["note"]
            if note:
                row["note"] = note
            out.append(json.dumps(row, ensure_ascii=False))
        path = args.out / f"{saved.name}.{field}.jsonl"
        path.write_text("".join(line + "\n" for line in out), encoding="utf-8")
        print(f"{path}: {len(entries)} verdicts, {sum(v for _, v in entries):.0f} true")


if __name__ == "__main__":
    main()
