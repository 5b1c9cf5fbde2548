"""Write tests/fixtures/mlflow/ with MLflow's own GenAI evaluation, offline.

mlflow is not a dependency of ragaudit (about 640 MB with its own dependencies): run this in
an environment that has it, e.g.::

    uv venv /tmp/mlflow-venv && uv pip install --python /tmp/mlflow-venv mlflow==3.18.0
    /tmp/mlflow-venv/bin/python -I -c "import runpy; runpy.run_path(
        'scripts/make_mlflow_fixtures.py', run_name='__main__')" tests/fixtures/mlflow

(run by a relative path, so the stack trace MLflow records for the failing question names
``scripts/make_mlflow_fixtures.py``, not where the repository lives on this machine).

Three systems answer the same 40 arithmetic questions (``inputs.question_id`` ``s01`` ...
``s40``, ``inputs.topic`` for ``--cluster-by topic``) with a deterministic rule, as in
scripts/make_inspect_fixtures.py: ``sys-a`` is wrong on every 4th question, ``sys-b`` on every
7th and on ``s02`` and ``s03`` (and raises on ``s13``: its trace ends in state ``ERROR``),
``sys-d`` on odd questions and on every 4th.  Each answer is a traced function whose
``CHAT_MODEL`` span records token usage (words of the question in, 1 out) and a cost ($1e-6 a
token), so nothing is priced online.  ``mlflow.genai.evaluate`` scores every trace with two
code scorers: ``exact_match`` (a boolean) and ``digits_overlap`` (a number in [0, 1]), one
worker at a time.  The tracking store is a sqlite file in a temporary directory (MLflow 3.18
refuses its file store unless told otherwise); telemetry is off.

What is committed, per system: ``sys-X.traces.jsonl``, the evaluation's traces with their
assessments, one ``Trace.to_json()`` per line, as ``mlflow.search_traces(run_id=...,
return_type="list")`` returns them; ``--from mlflow`` reads that file.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")
# one writer at a time: with its defaults (10 workers, traces sent in the background) the sqlite
# store runs out of pooled connections and traces are lost
os.environ.setdefault("MLFLOW_GENAI_EVAL_MAX_WORKERS", "1")
os.environ.setdefault("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", "false")

import mlflow
from mlflow.entities import SpanType
from mlflow.genai.scorers import scorer

TOPICS = ("sums", "products", "differences", "mixed")
WRONG = {
    "sys-a": lambda i: i % 4 == 0,
    "sys-b": lambda i: i % 7 == 0 or i in (2, 3),
    "sys-d": lambda i: i % 2 == 1 or i % 4 == 0,
}


def data() -> list[dict]:
    rows = []
    for i in range(1, 41):
        a, b = 3 * i + 1, i + 7
        rows.append(
            {
                "inputs": {
                    "question_id": f"s{i:02d}",
                    "question": f"What is {a} + {b}?",
                    "topic": TOPICS[i % 4],
                },
                "expectations": {"expected_response": str(a + b)},
            }
        )
    return rows


def system(name: str):
    wrong = WRONG[name]

    @mlflow.trace(span_type=SpanType.CHAT_MODEL, name="chat")
    def chat(question: str) -> str:
        words = question.split()
        a, b = int(words[2]), int(words[4].rstrip("?"))
        i = (a - 1) // 3
        span = mlflow.get_current_active_span()
        tokens_in = len(words)
        if span is None:  # evaluate's first, untraced call checks the function's signature
            return str(a + b + (1 if wrong(i) else 0))
        span.set_attribute(
            "mlflow.chat.tokenUsage",
            {"input_tokens": tokens_in, "output_tokens": 1, "total_tokens": tokens_in + 1},
        )
        span.set_attribute(
            "mlflow.llm.cost",
            {
                "input_cost": tokens_in * 1e-6,
                "output_cost": 1e-6,
                "total_cost": (tokens_in + 1) * 1e-6,
            },
        )
        return str(a + b + (1 if wrong(i) else 0))

    def predict(question_id: str, question: str, topic: str) -> str:
        if name == "sys-b" and question_id == "s13":
            raise TimeoutError("simulated model timeout")  # a trace in state ERROR
        return chat(question)

    return mlflow.trace(predict, name=name)


@scorer
def exact_match(outputs, expectations) -> bool:
    return str(outputs).strip() == expectations["expected_response"]


@scorer
def digits_overlap(outputs, expectations) -> float:
    """The share of the expected answer's digits found at the same place in the output."""
    want, got = expectations["expected_response"], str(outputs).strip()
    same = sum(x == y for x, y in zip(want, got, strict=False))
    return same / len(want)


def main(out: str) -> None:
    target = Path(out).resolve()
    target.mkdir(parents=True, exist_ok=True)
    store = tempfile.mkdtemp(prefix="ragaudit-mlflow-")
    os.chdir(store)  # mlflow writes beside the working directory (mlruns/): not in the repo
    mlflow.set_tracking_uri(f"sqlite:///{store}/mlflow.db")
    mlflow.create_experiment("ragaudit-fixture", artifact_location="file:///tmp/ragaudit-artifacts")
    mlflow.set_experiment("ragaudit-fixture")
    for name in WRONG:
        with mlflow.start_run(run_name=name) as run:
            mlflow.genai.evaluate(
                data=data(), predict_fn=system(name), scorers=[exact_match, digits_overlap]
            )
        traces = mlflow.search_traces(run_id=run.info.run_id, return_type="list")
        traces = sorted(traces, key=lambda t: t.info.request_time)
        with (target / f"{name}.traces.jsonl").open("w", encoding="utf-8") as file:
            for trace in traces:
                file.write(trace.to_json() + "\n")
        print(f"{name}: {len(traces)} traces, mlflow {mlflow.__version__}")


if __name__ == "__main__":
    main(sys.argv[1])
