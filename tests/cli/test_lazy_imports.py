"""Start-up stays instant: building the CLI and rendering every ``--help`` imports nothing heavy.

A test of laziness, not of timing (issue 15, "start instantly").  It runs in a fresh interpreter,
because other tests in this process import the heavy modules on purpose.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

#: Imported only on the path that needs them (seconds of start-up between them).
HEAVY = ("scipy", "bm25s", "openai", "pandas", "pyarrow", "sklearn", "polars", "numpy")

_PROBE = textwrap.dedent(
    """
    import json, sys
    import click
    from click.testing import CliRunner
    from ragaudit.cli import main

    def paths(command, prefix):
        yield prefix
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                yield from paths(command.get_command(ctx, name), [*prefix, name])

    seen, failed = [], []
    runner = CliRunner()
    for path in paths(main, []):
        result = runner.invoke(main, [*path, "--help"])
        seen.append(" ".join(path))
        if result.exit_code != 0 or "Usage:" not in result.output:
            failed.append([path, result.exit_code, result.output[-300:]])
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)
    print(json.dumps({"seen": seen, "failed": failed, "heavy": heavy}))
    """
)


@pytest.fixture(scope="module")
def probe() -> dict[str, list]:
    code = f"HEAVY = {HEAVY!r}\n{_PROBE}"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, list] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_every_help_renders(probe: dict[str, list]) -> None:
    from ragaudit.cli import _COMMANDS

    assert probe["failed"] == []
    # Every registered verb was visited, and the groups' subcommands too.
    assert {p.split(" ")[0] for p in probe["seen"] if p} == set(_COMMANDS)
    assert "labels build" in probe["seen"]


def test_help_imports_no_heavy_module(probe: dict[str, list]) -> None:
    heavy_roots = sorted({m.split(".")[0] for m in probe["heavy"]})
    assert heavy_roots == [], (
        f"`ragaudit ... --help` imported {heavy_roots}; import them inside the command "
        "(or the library function) that needs them"
    )


@pytest.mark.parametrize(
    "package",
    ["ragaudit.data", "ragaudit.metrics", "ragaudit.stats", "ragaudit.judges", "ragaudit.labels",
     "ragaudit.llm", "ragaudit.pipeline"],
)  # fmt: skip
def test_lazy_packages_resolve_every_public_name(package: str) -> None:
    import importlib

    module = importlib.import_module(package)
    assert sorted(module._WHERE) == sorted(module.__all__)
    for name in module.__all__:
        value = getattr(module, name)
        assert getattr(value, "__name__", name) == name or not callable(value)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        module.__getattr__("no_such_name")


def test_a_public_name_that_is_also_its_module_name_stays_the_public_object() -> None:
    # Importing the submodule binds it to the package attribute of the same name; the lazy
    # package keeps the function, as an eager `from .evaluate import evaluate` would.
    import ragaudit.metrics.evaluate
    import ragaudit.stats.judge_noise
    from ragaudit.metrics import evaluate
    from ragaudit.stats import judge_noise

    assert callable(evaluate) and evaluate.__module__ == "ragaudit.metrics.evaluate"
    assert callable(judge_noise) and judge_noise.__module__ == "ragaudit.stats.judge_noise"
    assert ragaudit.metrics.evaluate is evaluate
