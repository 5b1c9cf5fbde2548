"""The offline correctness judge on fresh hand-written cases it was not tuned on.

``benchmarks/data/judges_fresh_cases.yaml`` was written after the rules of issue 31 and
committed before its first run through the judge (its header says so).  Prints decided
accuracy, the decided share and every miss.

First run (commit 40d52d4, before any change): decided 40/40, right on 39/40.  The miss,
"Twenty-five days a year." for "25 days per calendar year.", read "calendar" as the rate
period; the rate reader was then fixed to take the period past one qualifier, so from that
commit on this file is no longer an independent measure of the rate rule.

Usage::

    uv run python benchmarks/judges_fresh_cases.py
"""

from __future__ import annotations

from pathlib import Path

import yaml

from ragaudit.judges.offline import judge_offline

CASES = Path(__file__).parent / "data" / "judges_fresh_cases.yaml"


def main() -> None:
    cases = yaml.safe_load(CASES.read_text(encoding="utf-8"))["cases"]
    decided = right = 0
    for case in cases:
        verdict = judge_offline(
            answer=case["a"], answerable=True, reference_answer=case["ref"], keywords=[],
            context_texts=[case["ref"]], question=case["q"],
        )  # fmt: skip
        got = verdict["correct"]
        if got is None:
            print(f"undecided: {case['a']!r} for {case['ref']!r}: {verdict['reasons']['correct']}")
            continue
        decided += 1
        right += got is case["correct"]
        if got is not case["correct"]:
            reader = case["correct"]
            print(f"miss: {case['a']!r} for {case['ref']!r}: judged {got}, a reader {reader}")
    print(f"decided {decided}/{len(cases)}; right on {right}/{decided} decided")


if __name__ == "__main__":
    main()
