"""Print a saved run for blind grading: question, reference, answer and context chunk texts.

Only what a human grader should see: no judge verdicts, no metrics, no keywords, no funnel
stage.  Used to write the human-verdict fixtures (src/ragaudit/benchmark/human_verdicts/).

    uv run python scripts/grading_view.py RUN.json --corpus DIR [--qid QID ...]
"""

from __future__ import annotations

import argparse
import json

from ragaudit.pipeline.chunking import chunk_documents
from ragaudit.pipeline.corpus import load_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run")
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--qid", action="append", default=[], dest="qids")
    args = parser.parse_args()
    with open(args.run, encoding="utf-8") as handle:
        run = json.load(handle)
    config = run["config"]
    documents = load_corpus(args.corpus)
    chunks = chunk_documents(
        documents, config["chunk_size"], config["chunk_overlap"], config["chunker"]
    )
    text = {chunk.chunk_id: chunk for chunk in chunks}
    for row in run["rows"]:
        if args.qids and row["id"] not in args.qids:
            continue
        print("=" * 100)
        print(f"{row['id']}  answerable={row['answerable']}  sources={row.get('gold_docs')}")
        print(f"Q: {row['question']}")
        print(f"REF: {row['reference_answer']}")
        print(f"ANSWER: {row['answer']}")
        for rank, chunk_id in enumerate(row["context_ids"], 1):
            chunk = text[chunk_id]
            print(f"--- context {rank}: {chunk.doc_id} ---")
            print(chunk.text)


if __name__ == "__main__":
    main()
