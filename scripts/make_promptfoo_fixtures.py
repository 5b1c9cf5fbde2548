"""Write tests/fixtures/promptfoo/ with promptfoo's own CLI, offline.

promptfoo is not a dependency of ragaudit: install it from the npm registry into a temporary
directory (0.120.27 on Node 20.20.2 wrote the committed files; its native better-sqlite3
module is built by npm's install script) and point this script at its binary::

    cd "$(mktemp -d)" && npm install --ignore-scripts=false promptfoo@0.120.27
    uv run python -I scripts/make_promptfoo_fixtures.py tests/fixtures/promptfoo \\
        "$OLDPWD/node_modules/.bin/promptfoo"

Two evaluations over the same 40 arithmetic questions (``vars.id`` ``s01`` ... ``s40``,
``metadata.topic``), each with the assertions ``equals`` the target and ``icontains`` it:

* ``results.json``: the built-in ``echo`` provider (it returns the rendered prompt) with three
  prompts, one per system, whose text is that system's answer, with a deterministic rule as in
  scripts/make_inspect_fixtures.py: ``sys-a`` is wrong on every 4th question, ``sys-b`` on every
  7th and on ``s02`` and ``s03``, ``sys-d`` on odd questions and on every 4th.  echo records no
  tokens and a cost of 0.
* ``priced.json``: the ``sys-a`` prompt answered by a custom provider (``priced_echo.js``, a
  promptfoo ``file://`` provider) that echoes like ``echo`` but reports token usage (words of
  the question in, 1 out) and a cost of $1e-6 a token, and fails on ``s13`` with an error.

* ``repeated.json``: the ``sys-a`` prompt run 3 times (``promptfoo eval --repeat 3``) by a
  custom provider (``flaky_echo.js``) that echoes like ``echo`` except that it answers one
  more than the target on the n-th call for question ``s<i>`` when ``(i + n) % 3 == 0`` or
  ``i % 4 == 0`` (calls counted per question, one at a time with ``-j 1``): repeats of one
  question that disagree, for the import of repeated runs.

The configs are written beside the results.  Telemetry, sharing and update checks are off and
promptfoo's database goes to a temporary directory; nothing leaves the machine.  promptfoo
runs in the output directory with relative paths, so no machine path is written.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

TOPICS = ("sums", "products", "differences", "mixed")
WRONG = {
    "sys-a": lambda i: i % 4 == 0,
    "sys-b": lambda i: i % 7 == 0 or i in (2, 3),
    "sys-d": lambda i: i % 2 == 1 or i % 4 == 0,
}
PRICED = """\
// A promptfoo provider: echoes the prompt, with token usage and cost; fails on one question.
class PricedEcho {
  id() { return 'priced-echo'; }
  async callApi(prompt, context) {
    if (context.vars.id === 's13') return { error: 'simulated provider failure' };
    const tokens = context.vars.question.split(' ').length;
    return {
      output: prompt,
      tokenUsage: { prompt: tokens, completion: 1, total: tokens + 1 },
      cost: (tokens + 1) * 1e-6,
    };
  }
}
module.exports = PricedEcho;
"""
FLAKY = """\
// A promptfoo provider: echoes the prompt, but is wrong on some calls of some questions.
const calls = {};
class FlakyEcho {
  id() { return 'flaky-echo'; }
  async callApi(prompt, context) {
    const id = context.vars.id;
    calls[id] = (calls[id] || 0) + 1;
    const i = parseInt(id.slice(1), 10);
    const wrong = (i + calls[id]) % 3 === 0 || i % 4 === 0;
    return { output: wrong ? String(parseInt(context.vars.target, 10) + 1) : prompt };
  }
}
module.exports = FlakyEcho;
"""


def tests() -> list[dict]:
    out = []
    for i in range(1, 41):
        a, b = 3 * i + 1, i + 7
        right = a + b
        answers = {f"answer_{s[-1]}": str(right + (1 if w(i) else 0)) for s, w in WRONG.items()}
        out.append({
            "description": f"s{i:02d}",
            "vars": {"id": f"s{i:02d}", "question": f"What is {a} + {b}?", **answers,
                     "target": str(right)},
            "metadata": {"topic": TOPICS[i % 4]},
        })  # fmt: skip
    return out


def config(systems: tuple[str, ...], provider: str) -> dict:
    return {
        "description": "ragaudit fixture: arithmetic questions",
        "prompts": [{"raw": f"{{{{answer_{s[-1]}}}}}", "label": s} for s in systems],
        "providers": [provider],
        "defaultTest": {"assert": [{"type": "equals", "value": "{{target}}"},
                                   {"type": "icontains", "value": "{{target}}"}]},
        "tests": tests(),
    }  # fmt: skip


def run(promptfoo: str, target: Path, name: str, settings: dict, *extra: str) -> None:
    (target / f"{name}.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    home = tempfile.mkdtemp()
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": home, "PROMPTFOO_DISABLE_SHARING": "1"}  # fmt: skip
    # promptfoo exits 100 when an assertion fails, which is expected here
    done = subprocess.run(
        [promptfoo, "eval", "-c", f"{name}.yaml", "-o", f"{name}.json", "--no-cache",
         "--no-progress-bar", "--no-table", "-j", "1", *extra],
        check=False, env=env, cwd=target,
    )  # fmt: skip
    if done.returncode not in (0, 100):
        raise SystemExit(f"promptfoo eval exited {done.returncode}")


def main(out: str, promptfoo: str) -> None:
    target = Path(out).resolve()
    target.mkdir(parents=True, exist_ok=True)
    run(promptfoo, target, "results", config(tuple(WRONG), "echo"))
    (target / "priced_echo.js").write_text(PRICED)
    run(promptfoo, target, "priced", config(("sys-a",), "file://priced_echo.js"))
    (target / "flaky_echo.js").write_text(FLAKY)
    run(promptfoo, target, "repeated", config(("sys-a",), "file://flaky_echo.js"),
        "--repeat", "3")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1], os.path.abspath(sys.argv[2]))
