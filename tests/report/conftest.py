"""Fixtures of the report tests: the bundled benchmark's k=3 and k=6 runs, a hostile corpus,
and a headless Chromium (Debian's package, driven by Playwright; never a downloaded browser)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ragaudit.cli import main

CHROMIUM = os.environ.get("RAGAUDIT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(os.environ.get("RAGAUDIT_TEST_ARTIFACTS", "build/test-artifacts"))


def cli(*args: str) -> str:
    """Run ``ragaudit ARGS`` in-process; fail the test on a non-zero exit."""
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def run(corpus: Path, golden: Path, out: Path, name: str, *options: str) -> None:
    """``ragaudit run`` of the offline pipeline, saved as ``out/name.json`` (no timings)."""
    cli("run", "--corpus", str(corpus), "--golden", str(golden), "--name", name,
        "--out", str(out), "--no-timing", *options)  # fmt: skip


@dataclass
class Loaded:
    """A page open in the browser, with everything it tried to do."""

    page: Any
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    @property
    def network_requests(self) -> list[str]:
        return [url for url in self.requests if not url.startswith("file:")]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip(f"Debian's chromium is not installed ({CHROMIUM}); .ci/run installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    """``open_page(path) -> Loaded``: load a file with every request routed and counted."""
    contexts = []

    def load(path: Path, width: int = 1280) -> Loaded:
        context = browser.new_context(viewport={"width": width, "height": 900})
        contexts.append(context)
        page = context.new_page()
        loaded = Loaded(page)

        def route(request_route: Any) -> None:
            loaded.requests.append(request_route.request.url)
            if request_route.request.url.startswith("file:"):
                request_route.continue_()
            else:
                request_route.abort()

        context.route("**/*", route)
        page.on(
            "console", lambda m: loaded.console_errors.append(m.text) if m.type == "error" else None
        )
        page.on("pageerror", lambda e: loaded.page_errors.append(str(e)))

        def on_dialog(dialog: Any) -> None:
            loaded.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        response = page.goto(path.resolve().as_uri(), wait_until="load")
        assert response is not None and response.ok
        return loaded

    yield load
    for context in contexts:
        context.close()


@pytest.fixture(scope="session")
def bench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo's outputs: k=3 and k=6 runs, chunk labels, the corpus, and their report."""
    from ragaudit.cli.demo import benchmark_paths

    out = tmp_path_factory.mktemp("bench")
    with benchmark_paths() as (corpus, golden):
        corpus_copy = out / "corpus"
        shutil.copytree(corpus, corpus_copy)
        for k in (3, 6):
            run(corpus, golden, out, f"k{k}", "--k", str(k))
        cli(
            "labels",
            "build",
            "--corpus",
            str(corpus),
            "--golden",
            str(golden),
            "--out",
            str(out / "labels.yaml"),
        )
    paths = {
        "k3": out / "k3.json",
        "k6": out / "k6.json",
        "labels": out / "labels.yaml",
        "corpus": corpus_copy,
        "html": out / "report.html",
        "md": out / "report.md",
    }
    common = [
        str(paths["k3"]),
        str(paths["k6"]),
        "--labels",
        str(paths["labels"]),
        "--corpus",
        str(paths["corpus"]),
    ]
    cli("report", *common, "--out", str(paths["html"]))
    cli("report", *common, "--out", str(paths["md"]), "--format", "markdown")
    return paths


HOSTILE = {
    "script": "<script>alert('script')</script>",
    "img": '"><img src=x onerror=alert("img")>',
    "link": "[click](javascript:alert('link')) <a href=\"javascript:alert('a')\">a</a>",
    "svg": "<svg onload=alert('svg')></svg>",
}


@pytest.fixture(scope="session")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two runs over a corpus whose ids, texts, questions and answers carry script payloads."""
    out = tmp_path_factory.mktemp("hostile")
    corpus = out / "corpus"
    corpus.mkdir()
    payload = " ".join(HOSTILE.values())
    (corpus / "policy.md").write_text(
        "# Policy\n\nThe refund limit is 50 EUR per claim. "
        + payload
        + "\n\n"
        + ("Filler sentence about nothing in particular. " * 30)
        + "\n\nThe office opens at "
        "9 am. " + payload + "\n",
        encoding="utf-8",
    )
    (corpus / "other.md").write_text(
        "# Other\n\n" + payload + " Parking is free for visitors.\n", encoding="utf-8"
    )
    questions = []
    for i, (name, text) in enumerate(HOSTILE.items()):
        questions.append(
            {
                "id": f"q{i}{text}",
                "question": f"What is the refund limit? {text}",
                "answer": f"50 EUR {text}",
                "sources": ["policy"],
                "answerable": True,
                "keywords": ["50 EUR" if i % 2 else f"limit {name} {text}"],
            }
        )
    questions.append(
        {
            "id": "u" + HOSTILE["script"],
            "question": "Who won in 1900? " + HOSTILE["img"],
            "answer": "",
            "sources": [],
            "answerable": False,
            "keywords": [],
        }
    )
    golden = out / "golden.yaml"
    golden.write_text(json.dumps(questions), encoding="utf-8")  # JSON is YAML
    runs = {}
    for k in (1, 2):
        name = f"k{k}"
        run(corpus, golden, out, name, "--k", str(k), "--chunk-size", "200",
            "--chunk-overlap", "20")  # fmt: skip
        runs[name] = out / f"{name}.json"
    # The run name is data too: make it hostile inside the saved file.
    data = json.loads(runs["k2"].read_text(encoding="utf-8"))
    data["name"] = "k2" + HOSTILE["script"] + HOSTILE["img"]
    runs["k2"].write_text(json.dumps(data), encoding="utf-8")
    html, md = out / "report.html", out / "report.md"
    common = [str(runs["k1"]), str(runs["k2"]), "--corpus", str(corpus)]
    cli("report", *common, "--out", str(html))
    cli("report", *common, "--out", str(md), "--format", "markdown")
    return {"html": html, "md": md, **runs}
