"""Write the inspect_ai logs of tests/fixtures/inspect/ with inspect_ai's offline mock model.

inspect_ai is not a dependency of ragaudit (about 230 MB with its own dependencies): run this
in an environment that has it, e.g.::

    uv run --with inspect-ai==0.3.285 --no-project python scripts/make_inspect_fixtures.py \\
        tests/fixtures/inspect

Four tasks over the same 40 arithmetic questions (ids ``s01`` ... ``s40``, metadata ``topic``),
scored by inspect's ``match()`` and ``includes()`` scorers, answered by ``mockllm/model`` with
a deterministic rule per system: ``sys-a`` is wrong on every 4th question, ``sys-b`` on every
7th and on ``s02`` and ``s03``; ``sys-c`` runs 3 epochs and is wrong on odd questions in
its second epoch only; ``sys-d`` is wrong on odd questions and on every 4th.  Each log is
written in both formats (``.eval`` and ``.json``).
Token usage is set on each mock output (words of the prompt, 1 output token), so nothing is
downloaded: the mock model otherwise counts tokens with tiktoken, which fetches its vocabulary.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes, match
from inspect_ai.solver import generate

TOPICS = ("sums", "products", "differences", "mixed")


def samples() -> list[Sample]:
    out = []
    for i in range(1, 41):
        a, b = 3 * i + 1, i + 7
        out.append(
            Sample(
                input=f"What is {a} + {b}? Reply with the number only.",
                target=str(a + b),
                id=f"s{i:02d}",
                metadata={"topic": TOPICS[i % 4]},
            )
        )
    return out


def answerer(wrong):  # wrong(question index, epoch) -> bool
    calls: dict[str, int] = {}

    def output(messages, tools, tool_choice, config):
        text = messages[-1].text
        calls[text] = calls.get(text, 0) + 1
        words = text.split()
        a, b = int(words[2]), int(words[4].rstrip("?"))
        i = (a - 1) // 3
        value = a + b + (1 if wrong(i, calls[text]) else 0)
        output = ModelOutput.from_content(model="mockllm/model", content=str(value))
        # usage given here, so the mock model does not count tokens with tiktoken (which
        # downloads its vocabulary: the run must stay offline)
        output.usage = ModelUsage(
            input_tokens=len(words), output_tokens=1, total_tokens=len(words) + 1
        )
        return output

    return output


SYSTEMS = {
    "sys-a": (1, lambda i, e: i % 4 == 0),
    "sys-b": (1, lambda i, e: i % 7 == 0 or i in (2, 3)),
    "sys-c": (3, lambda i, e: i % 2 == 1 and e == 2),
    "sys-d": (1, lambda i, e: i % 2 == 1 or i % 4 == 0),
}


def main(out: str) -> None:
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    for name, (epochs, wrong) in SYSTEMS.items():
        for fmt in ("eval", "json"):
            task = Task(
                dataset=samples(),
                solver=generate(),
                scorer=[match(), includes()],
                epochs=epochs,
                name=name,
            )
            model = get_model("mockllm/model", custom_outputs=answerer(wrong))
            work = target / f"_{name}_{fmt}"
            [log] = eval(
                task,
                model=model,
                log_dir=str(work),
                log_format=fmt,
                display="none",
                log_samples=True,
            )
            shutil.move(log.location, target / f"{name}.{fmt}")
            shutil.rmtree(work)


if __name__ == "__main__":
    main(sys.argv[1])
