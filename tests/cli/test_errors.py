"""One error style on every command: one line, FILE: expected ..., found ..., exit 2."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ragaudit.cli import main
from ragaudit.cli._errors import error_line

MISSING = "no/such/file.json"
QRELS = "tests/data/metrics/qrels.txt"
RUN = "tests/data/metrics/run.txt"
K6 = "tests/data/stats/k6.json"
NOT_FOUND = f"ragaudit: error: {MISSING}: expected an existing file, found nothing at this path\n"

COMMANDS = [
    ["evaluate", "--qrels", MISSING, "--run", RUN],
    ["evaluate", "--qrels", QRELS, "--run", MISSING],
    ["compare", MISSING, K6],
    ["funnel", MISSING],
    ["show", MISSING],
    ["import", MISSING],
    ["agreement", MISSING, QRELS],
    ["labels", "bias", MISSING, "--labels", QRELS],
    ["run", "--corpus", "tests/data/harness/corpus", "--golden", MISSING],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_missing_file_is_one_line_and_exit_2(args):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.stderr == NOT_FOUND
    assert result.stdout == ""


def test_a_directory_where_a_file_is_expected():
    result = CliRunner().invoke(main, ["funnel", "tests"])
    # click's own path check or ours: either way one line, exit 2, no errno
    assert result.exit_code == 2
    assert "Errno" not in result.output and "Traceback" not in result.output


def test_output_path_under_a_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = CliRunner().invoke(
        main,
        ["run", "--corpus", "tests/data/harness/corpus", "--golden",
         "tests/data/harness/golden.yaml", "--out", str(blocker / "sub"), "--limit", "1"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"ragaudit: error: {blocker}")
    assert "expected a writable path, found a file where a directory should be" in result.stderr
    assert "Errno" not in result.stderr and len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (
            PermissionError(13, "Permission denied", "secret.txt"),
            "ragaudit: error: secret.txt: expected a readable file, found permission denied",
        ),
        (
            IsADirectoryError(21, "Is a directory", "runs"),
            "ragaudit: error: runs: expected a file, found a directory",
        ),
        (
            OSError(5, "Input/output error"),
            "ragaudit: error: input: expected a readable file, found input/output error",
        ),
    ],
)
def test_error_line_for_os_errors(exc, line):
    assert error_line(exc) == line


def _leaf_commands():
    """``(words, command)`` for every command and group subcommand the CLI registers."""
    import click

    ctx = click.Context(main)
    out = []
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                out.append(([name, sub], command.get_command(ctx, sub)))
        else:
            out.append(([name], command))
    return out


def _a_value(param):
    """A value click's parser accepts for ``param`` (nothing is run: a required option that
    is left out stops the command before its body)."""
    import click

    if isinstance(param.type, click.Choice):
        return [str(param.type.choices[0])]
    if isinstance(param.type, click.types.FloatParamType):
        return ["0.5"]
    if isinstance(param.type, click.types.IntParamType):
        return ["1"]
    return ["x"] * (param.nargs if param.nargs > 0 else 1)


def _required_options():
    import click

    cases = []
    for words, command in _leaf_commands():
        required = [p for p in command.params if p.required]
        for left_out in (p for p in required if isinstance(p, click.Option)):
            args = list(words)
            for param in required:
                if param is left_out:
                    continue
                if isinstance(param, click.Option):
                    args.append(param.opts[0])
                args.extend(_a_value(param))
            name = f"{' '.join(words)} {left_out.opts[0]}"
            cases.append(pytest.param(args, left_out.opts[0], id=name))
    return cases


@pytest.mark.parametrize(("args", "option"), _required_options())
def test_a_required_option_left_out_is_a_usage_error_not_a_traceback(args, option):
    # Regression: with click >= 8.3, `required=True` beside an explicit `default=None` was not
    # enforced, so `labels bias RUN`, `labels build` and `judge` without --labels/--corpus ran
    # on and crashed with a TypeError traceback.
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert not isinstance(result.exception, TypeError | AttributeError)
    assert f"Missing option '{option}'" in result.output
    assert "Traceback" not in result.output


LABELS_EMPTY = "the labels are empty: expected at least one labelled question"
RUN_EMPTY = "the run is empty: expected at least one ranked item"


@pytest.mark.parametrize(
    ("args", "empty", "message"),
    [
        (["evaluate", "--qrels", "{e}", "--run", RUN, "-m", "hit@3"], "q.txt", LABELS_EMPTY),
        (["evaluate", "--qrels", QRELS, "--run", "{e}", "-m", "hit@3"], "r.txt", RUN_EMPTY),
        (["evaluate", "--qrels", QRELS, "--run", RUN, "--run", "{e}", "-m", "hit@3"], "r.txt",
         RUN_EMPTY),
        (["compare", RUN, RUN, "--qrels", "{e}", "-m", "hit@3"], "q.txt", LABELS_EMPTY),
    ],
)  # fmt: skip
def test_an_empty_labels_or_run_file_is_named(tmp_path, args, empty, message):
    # Regression: "ragaudit: error: the labels are empty: ..." did not say which file.
    path = tmp_path / empty
    path.write_text("", encoding="utf-8")
    result = CliRunner().invoke(main, [a.replace("{e}", str(path)) for a in args])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == f"ragaudit: error: {path}: {message}"


def test_unwritable_outputs_are_one_line_naming_the_output(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    saved = "tests/data/stats/k6.json"
    for args, target in (
        (["export", saved, "--to", "trec-run", "--out", f"{blocker}/r.run"], f"{blocker}/r.run"),
        (["baseline", "update", saved, "--to", f"{blocker}/b.json"], f"{blocker}/b.json"),
    ):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, result.output
        assert result.stderr == (
            f"ragaudit: error: {target}: expected a writable path, found a file where a "
            "directory should be\n"
        )
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))  # a directory
    result = CliRunner().invoke(main, ["compare", saved, saved, "-m", "correct"])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == (
        f"ragaudit: error: {tmp_path}: $GITHUB_STEP_SUMMARY: expected a writable path, found a "
        "directory"
    )


def test_a_question_twice_in_evaluate_per_query_output_is_refused(tmp_path):
    # Regression: json.loads keeps the last of two equal keys, so a per_query mapping with a
    # question written twice lost the other question silently and compare went on without it.
    text = (
        '{"metrics": {"hit@3": 1.0}, "n_queries": 2, "per_query": {\n'
        '  "q1": {"hit@3": 1.0},\n'
        '  "q1": {"hit@3": 0.0}\n'
        "}}\n"
    )
    path = tmp_path / "a.json"
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["compare", str(path), str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"ragaudit: error: {path}:3: q1: expected each key once in an object, found it twice\n"
    )
