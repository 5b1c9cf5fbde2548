"""Every ``ragaudit`` command in docs/guide/*.md and README.md runs as written, and every output
sample in them is what the command prints today.

A command is a line in a fenced block that starts with ``$ ragaudit``, ``$ uv run ragaudit``,
``ragaudit`` or ``uv run ragaudit`` (also ``uv run --no-dev ragaudit``; ``\\`` continues it on
the next line; a trailing ``# comment`` and ``| head -N`` / ``| tail -N`` are understood). The
lines after a ``$`` command, up to the next ``$`` line or the end of the block, are its output
sample; ``$ echo $?`` after a command states its exit code, a sample that starts with
``ragaudit: error:`` documents exit 2, and any other command must exit 0. Each document runs
top to bottom in its own sandbox directory, which links ``src``, ``tests`` and ``docs`` of the
repository, so relative paths work exactly as from the repository root and the files the
commands write stay out of the checkout. A block preceded by ``<!-- doc-examples: skip (reason)
-->`` is not run (the reason says why). A block preceded by ``<!-- doc-examples: llm-server
-->`` runs with ``RAGAUDIT_LLM_BASE_URL`` pointing at a scripted chat-completions server on
127.0.0.1 (tests/docs/doc_model.py) and ``RAGAUDIT_LLM_MODEL=gpt-4o-mini``; every other block
runs with no endpoint configured.

Regenerate the samples after an intended change of output with ``scripts/regen_docs``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shlex
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
DOCS = [*sorted((ROOT / "docs" / "guide").glob("*.md")), ROOT / "README.md"]
SHELL_FENCES = {"", "console", "bash", "sh", "shell", "text"}
SKIP = re.compile(r"<!--\s*doc-examples:\s*skip\b")
LLM_SERVER = re.compile(r"<!--\s*doc-examples:\s*llm-server\b")
DOC_MODEL = "gpt-4o-mini"
PIPE = re.compile(r"\s*\|\s*(head|tail)\s+-(?:n\s*)?(\d+)\s*$")
LINKED = ("src", "tests", "docs", "README.md", "pyproject.toml")


def _commands() -> set[str]:
    from ragaudit.cli import _COMMANDS

    return set(_COMMANDS)


COMMANDS = _commands()


@dataclass
class Example:
    """One command of a document, with its output sample (line numbers are 0-based)."""

    doc: Path
    line: int
    command: str
    prompt: bool
    sample: list[str] = field(default_factory=list)
    sample_start: int = 0
    exit_code: int = 0
    indent: str = ""
    llm: bool = False


def parse(doc: Path) -> list[Example]:
    """The examples of one Markdown file, in order."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    examples: list[Example] = []
    fence: str | None = None
    indent = ""
    run_block = True
    llm_block = False
    current: Example | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if fence is None:
            match = re.match(r"^(\s*)(`{3,})(\w*)\s*$", line)
            if match:
                indent, fence = match.group(1), match.group(2)
                previous = next((x for x in reversed(lines[:i]) if x.strip()), "")
                run_block = match.group(3) in SHELL_FENCES and not SKIP.search(previous)
                llm_block = bool(LLM_SERVER.search(previous))
            i += 1
            continue
        if stripped == fence:
            fence, current = None, None
            i += 1
            continue
        if not run_block:
            i += 1
            continue
        command_match = re.match(r"^\$ (.*)$", stripped)
        text = command_match.group(1) if command_match else stripped
        verb = re.match(r"^(?:uv run (?:--no-dev )?)?ragaudit ([a-z]+)(?: |$)", text)
        is_command = verb is not None and verb.group(1) in COMMANDS
        if command_match and text.startswith("echo $?") and current is not None:
            expected = lines[i + 1].strip() if i + 1 < len(lines) else ""
            current.exit_code = int(expected)
            current = None
            i += 2
            continue
        if is_command and (command_match or current is None):
            start = i
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1].rstrip() + " " + lines[i].strip()
            current = Example(
                doc, start, text, command_match is not None, [], i + 1, 0, indent, llm_block
            )
            examples.append(current)
            if not command_match:
                current = None
        elif command_match:
            current = None  # another shell command: not ours, and no sample
        elif current is not None and current.prompt:
            current.sample.append(line[len(indent) :] if line.startswith(indent) else line)
        i += 1
    return examples


def split(command: str) -> tuple[list[str], tuple[str, int] | None]:
    """``argv`` after ``ragaudit`` and an optional ``(head|tail, n)`` filter."""
    pipe = None
    words = shlex.split(command, comments=True)
    text = shlex.join(words)
    match = PIPE.search(command.split("#")[0]) if "|" in command else None
    if match:
        pipe = (match.group(1), int(match.group(2)))
        words = shlex.split(PIPE.sub("", command.split("#")[0]))
    del text
    if words[:2] == ["uv", "run"]:
        words = words[2:]
        if words[:1] == ["--no-dev"]:
            words = words[1:]
    return words[1:], pipe


def varying(line: str) -> str:
    """``line`` with its numbers masked when it says it varies from run to run."""
    return re.sub(r"\d+", "N", line) if "varies run to run" in line else line


@contextmanager
def sandbox(tmp: Path) -> Iterator[Path]:
    for name in LINKED:
        (tmp / name).symlink_to(ROOT / name)
    old = Path.cwd()
    saved_env = dict(os.environ)
    os.environ["RAGAUDIT_CACHE_DIR"] = str(tmp / ".cache")
    for name in ("RAGAUDIT_LLM_BASE_URL", "OPENAI_BASE_URL", "RAGAUDIT_LLM_MODEL"):
        os.environ.pop(name, None)
    os.chdir(tmp)
    try:
        yield tmp
    finally:
        os.chdir(old)
        os.environ.clear()
        os.environ.update(saved_env)


def _model_server() -> Any:
    """The scripted chat server of tests/docs/doc_model.py (loaded by path: this file also
    runs as a script)."""
    from ragaudit.llm.testing import FakeChatServer

    path = Path(__file__).with_name("doc_model.py")
    spec = importlib.util.spec_from_file_location("doc_model", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return FakeChatServer(responder=module.reply)


def _files(where: Path) -> dict[str, bytes]:
    """Every file the sandbox holds besides the links to the repository, by relative path."""
    found: dict[str, bytes] = {}
    for top in where.iterdir():
        if top.is_symlink():
            continue
        for path in [top] if top.is_file() else sorted(top.rglob("*")):
            if path.is_file() and not path.is_symlink():
                found[path.relative_to(where).as_posix()] = path.read_bytes()
    return found


#: Commands already run (``ragaudit demo`` is in five documents), keyed by the command and
#: every file of the sandbox before it: what it printed and the files it wrote or changed.
_RUNS: dict[tuple[str, ...], tuple[int, str, dict[str, bytes]]] = {}


def _invoke(argv: list[str], where: Path, cacheable: bool) -> tuple[int, str]:
    """Exit code and output (the sandbox's path as ``.``) of ``ragaudit argv`` in ``where``.

    The same command on the same sandbox files (and no model server) prints the same and
    writes the same, so a repeat is replayed: its output, and its files written back (only
    when none of them holds the sandbox's path).  Issue 32 (CPU budget)."""
    from ragaudit.cli import main

    before = _files(where) if cacheable else {}
    state = sorted(f"{name}:{hashlib.sha256(data).hexdigest()}" for name, data in before.items())
    key = (*argv, "\0", *state)
    if cacheable and key in _RUNS:
        code, output, written = _RUNS[key]
        for name, data in written.items():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            (where / name).write_bytes(data)
        return code, output
    result = CliRunner().invoke(main, argv, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"raised {result.exception!r}")
    output = result.output.replace(str(where), ".")
    if cacheable:
        after = _files(where)
        written = {name: data for name, data in after.items() if before.get(name) != data}
        if set(before) <= set(after) and not any(
            str(where).encode() in data for data in written.values()
        ):
            _RUNS[key] = (result.exit_code, output, written)
    return result.exit_code, output


def run(example: Example, where: Path) -> tuple[int, list[str]]:
    """Exit code and output lines (stdout and stderr as a terminal shows them)."""
    argv, pipe = split(example.command)
    try:
        code, output = _invoke(argv, where, cacheable=not example.llm)
    except AssertionError as exc:
        raise AssertionError(
            f"{example.doc.name}:{example.line + 1}: {example.command}: {exc}"
        ) from None
    out = [line.rstrip() for line in output.splitlines()]
    if pipe is not None:
        out = out[: pipe[1]] if pipe[0] == "head" else out[-pipe[1] :]
    return code, out


def check(doc: Path, tmp: Path, write: bool = False) -> list[str]:
    """Run every example of ``doc``; return the problems (and rewrite samples if ``write``)."""
    problems: list[str] = []
    examples = parse(doc)
    replacements: list[tuple[int, int, list[str]]] = []
    with sandbox(tmp) as where, ExitStack() as stack:
        server: Any = None
        for ex in examples:
            if ex.sample and ex.sample[0].startswith("ragaudit: error:"):
                ex.exit_code = 2  # an error example documents itself
            if ex.llm and server is None:
                server = stack.enter_context(_model_server())
            if ex.llm:
                os.environ["RAGAUDIT_LLM_BASE_URL"] = server.base_url
                os.environ["RAGAUDIT_LLM_MODEL"] = DOC_MODEL
            code, out = run(ex, where)
            for name in ("RAGAUDIT_LLM_BASE_URL", "RAGAUDIT_LLM_MODEL"):
                os.environ.pop(name, None)
            where_ = f"{doc.relative_to(ROOT)}:{ex.line + 1}: {ex.command}"
            if code != ex.exit_code:
                problems.append(f"{where_}: exit {code}, documented {ex.exit_code}: {out[-3:]}")
            # A command with no sample (another command follows at once) shows no output.
            # a line that says it varies run to run (wall-clock latency) is compared with its
            # numbers masked
            if ex.prompt and ex.sample and [varying(s.rstrip()) for s in ex.sample] != [
                varying(line) for line in out
            ]:
                indented = [(ex.indent + line).rstrip() for line in out]
                replacements.append((ex.sample_start, ex.sample_start + len(ex.sample), indented))
                if not write:
                    problems.append(f"{where_}: the output sample is stale (scripts/regen_docs)")
    if write and replacements:
        lines = doc.read_text(encoding="utf-8").splitlines()
        for start, end, out in sorted(replacements, reverse=True):
            lines[start:end] = out
        doc.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_doc_examples_run_and_samples_are_current(doc: Path, tmp_path: Path) -> None:
    examples = parse(doc)
    assert all(ex.command for ex in examples)
    assert check(doc, tmp_path) == []


def test_the_parser_reads_commands_samples_and_exit_codes(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text(
        "```console\n$ ragaudit plan \\\n  --n 20   # comment\nline 1\nline 2\n"
        "$ ragaudit compare a b | tail -2\nz\n$ echo $?\n1\n```\n"
        "<!-- doc-examples: skip (needs a model) -->\n```\n$ ragaudit judge x\n```\n"
        "```bash\nuv run --no-dev ragaudit demo\n```\n```python\nragaudit.evaluate()\n```\n"
        "```\nragaudit demo: the output of the demo\n```\n",
        encoding="utf-8",
    )
    examples = parse(doc)
    assert [e.command for e in examples] == [
        "ragaudit plan --n 20   # comment",
        "ragaudit compare a b | tail -2",
        "uv run --no-dev ragaudit demo",
    ]
    assert examples[0].sample == ["line 1", "line 2"] and examples[0].exit_code == 0
    assert examples[1].sample == ["z"] and examples[1].exit_code == 1
    assert not examples[2].prompt and examples[2].sample == []
    assert split(examples[0].command) == (["plan", "--n", "20"], None)
    assert split(examples[1].command) == (["compare", "a", "b"], ("tail", 2))
    assert split(examples[2].command) == (["demo"], None)


def main(argv: list[str]) -> int:
    """``--write`` regenerates every sample; without it, print the problems."""
    import tempfile

    write = "--write" in argv
    problems: list[str] = []
    for doc in DOCS:
        with tempfile.TemporaryDirectory() as tmp:
            problems += check(doc, Path(tmp), write=write)
    print("\n".join(problems) or "docs: every example runs and every sample is current")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
