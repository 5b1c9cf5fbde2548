"""Write the three small TREC runs of docs/guide/metrics.md (several runs in one table).

40 questions, three relevant documents each out of 30; ``dense`` puts a relevant document
first far more often than ``bm25`` and ``hybrid``.  Seeded: rerunning gives the same files.
Run from this directory: ``uv run python make_runs.py``.
"""

import random

QUESTIONS = [f"q{i:02d}" for i in range(40)]
DOCUMENTS = [f"d{j}" for j in range(30)]


def write_run(
    rng: random.Random, relevant: dict[str, list[str]], name: str, p_first: float
) -> None:
    with open(f"{name}.trec", "w") as out:
        for q in QUESTIONS:
            ranking = rng.sample(DOCUMENTS, 10)
            if rng.random() < p_first:
                first = rng.choice(relevant[q])
                if first in ranking:
                    ranking.remove(first)
                ranking.insert(0, first)
            out.writelines(
                f"{q} Q0 {d} {i + 1} {10 - i} {name}\n" for i, d in enumerate(ranking[:10])
            )


def main() -> None:
    rng = random.Random(3)
    relevant = {q: rng.sample(DOCUMENTS, 3) for q in QUESTIONS}
    with open("qrels.txt", "w") as out:
        out.writelines(f"{q} 0 {d} 1\n" for q in QUESTIONS for d in relevant[q])
    for run_name, p in (("bm25", 0.3), ("dense", 0.8), ("hybrid", 0.35)):
        write_run(rng, relevant, run_name, p)


if __name__ == "__main__":
    main()
