"""Chunk labels whose ids are not this corpus's chunks are refused (naming a few of them),
wherever labels are read: run --chunk-labels, funnel --labels (with and without --corpus)
and labels bias; a file without the header says how to make a valid one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "harness"
CORPUS, GOLDEN = DATA / "corpus", DATA / "golden.yaml"
CHUNKING = ["--chunk-size", "300", "--chunk-overlap", "0"]
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("foreign")
    labels = root / "labels.yaml"
    code, output = invoke("labels", "build", "--corpus", str(CORPUS), "--golden", str(GOLDEN),
                          *CHUNKING, "--out", str(labels))  # fmt: skip
    assert code == 0, output
    code, output = invoke("run", "--corpus", str(CORPUS), "--golden", str(GOLDEN), "--k", "2",
                          *CHUNKING, "--no-timing", "--name", "r", "--out", str(root))  # fmt: skip
    assert code == 0, output
    # The same header, every chunk id replaced by one that is no chunk of this corpus: what
    # labels made by another tool, or for another corpus without a corpus hash, look like.
    text = labels.read_text()
    text = re.sub(r"corpus_sha256: .*", "corpus_sha256: null", text)
    counter = iter(range(10**6))
    foreign = root / "foreign.yaml"
    foreign.write_text(UUID.sub(lambda m: f"book-chunk-{next(counter):04d}", text))
    assert "book-chunk-0000" in foreign.read_text()
    headless = root / "headless.yaml"
    headless.write_text("questions:\n  q1: {answer_chunks: [c1]}\n")
    return {"labels": labels, "foreign": foreign, "headless": headless, "run": root / "r.json"}


MESSAGE = (
    r"foreign\.yaml: \d+ of \d+ labelled chunk ids are not {against} "
    r"\(e.g. 'book-chunk-0000', 'book-chunk-0001', 'book-chunk-0002'\); these labels were "
    r"made for another corpus or chunking: label it into a new file with ragaudit labels build "
    r"--corpus DIR --golden FILE --chunk-size N --chunk-overlap M --out \S*foreign\.chunk_labels"
    r"\.yaml"
)


@pytest.mark.parametrize(
    ("command", "against"),
    [
        (["run", "--corpus", str(CORPUS), "--golden", str(GOLDEN), "--k", "2", *CHUNKING,
          "--no-timing", "--name", "x", "--chunk-labels", "{foreign}", "--out", "{out}"],
         "chunks of this corpus and chunking"),
        (["funnel", "{run}", "--labels", "{foreign}"],
         "among the chunks this run retrieved for any question"),
        (["funnel", "{run}", "--labels", "{foreign}", "--corpus", str(CORPUS)],
         "chunks of the run's corpus and chunking"),
        (["labels", "bias", "{run}", "--labels", "{foreign}"],
         "among the chunks this run retrieved for any question"),
    ],
    ids=["run", "funnel", "funnel-corpus", "labels-bias"],
)  # fmt: skip
def test_foreign_chunk_ids_are_refused(
    files: dict[str, Path], tmp_path: Path, command: list[str], against: str
) -> None:
    args = [a.format(foreign=files["foreign"], run=files["run"], out=tmp_path) for a in command]
    code, output = invoke(*args)
    assert code == 2, output
    assert output.startswith("ragaudit: error: ") and output.count("\n") == 1
    assert re.search(MESSAGE.format(against=re.escape(against)), output), output
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize(
    "command",
    [
        ["funnel", "{run}", "--labels", "{labels}"],
        ["labels", "bias", "{run}", "--labels", "{labels}"],
    ],
)
def test_the_corpus_own_labels_pass(files: dict[str, Path], command: list[str]) -> None:
    code, output = invoke(*[a.format(labels=files["labels"], run=files["run"]) for a in command])
    assert code == 0, output


def test_a_file_without_the_header_says_how_to_make_one(files: dict[str, Path]) -> None:
    code, output = invoke("funnel", str(files["run"]), "--labels", str(files["headless"]))
    assert code == 2, output
    assert "format: expected 'ragaudit.chunk_labels', found None; " in output
    fresh = files["headless"].with_name("headless.chunk_labels.yaml")
    assert output.endswith(
        "this file is left as it is: write ragaudit's labels to a new file with ragaudit labels "
        f"build --corpus DIR --golden FILE --out {fresh}\n"
    )
    assert "--rebuild" not in output  # never advice to replace a file the command was given
    # the advice works: the suggested file is new, and building it succeeds (the file the
    # message was about is left alone)
    assert not fresh.exists()
    code, built = invoke("labels", "build", "--corpus", str(CORPUS), "--golden", str(GOLDEN),
                         *CHUNKING, "--out", str(fresh), "--quiet")  # fmt: skip
    assert code == 0, built
    assert files["headless"].read_text() == "questions:\n  q1: {answer_chunks: [c1]}\n"
    code, output = invoke("labels", "bias", str(files["run"]), "--labels", str(fresh))
    assert code == 0, output


BOOK = "q01:\n  chunks: [handbook-03, handbook-07]\n  note: from the chapter\nq02:\n  chunks: []\n"


@pytest.mark.parametrize(
    "command",
    [
        ["funnel", "{run}", "--labels", "{book}"],
        ["labels", "bias", "{run}", "--labels", "{book}"],
        ["run", "--corpus", str(CORPUS), "--golden", str(GOLDEN), "--k", "2", *CHUNKING,
         "--no-timing", "--name", "x", "--chunk-labels", "{book}", "--out", "{out}"],
        ["labels", "build", "--corpus", str(CORPUS), "--golden", str(GOLDEN), *CHUNKING,
         "--out", "{book}", "--quiet"],
        ["labels", "build", "--corpus", str(CORPUS), "--golden", str(GOLDEN), *CHUNKING,
         "--out", "{book}", "--quiet", "--rebuild"],
    ],
    ids=["funnel", "labels-bias", "run", "labels-build", "labels-build-rebuild"],
)  # fmt: skip
def test_the_books_label_file_is_never_advised_away_nor_replaced(
    files: dict[str, Path], tmp_path: Path, command: list[str]
) -> None:
    # Issue 32 item 13: given the book's own chunk_labels.yaml ({qid: {chunks: [...]}}), the
    # error advised `--rebuild` to replace it, and `labels build --rebuild` then did.
    book = tmp_path / "chunk_labels.yaml"
    book.write_text(BOOK, encoding="utf-8")
    args = [a.format(book=book, run=files["run"], out=tmp_path / "out") for a in command]
    code, output = invoke(*args)
    assert code == 2, output
    assert output.startswith(f"ragaudit: error: {book}") and output.count("\n") == 1
    assert output.count("--rebuild") == output.count("--rebuild replaces only")  # no advice
    fresh = tmp_path / "chunk_labels.chunk_labels.yaml"
    assert output.endswith(f"--out {fresh}\n") and not fresh.exists()
    assert book.read_text(encoding="utf-8") == BOOK


def test_no_message_advises_rebuild():
    # `--rebuild` replaces the file in --out; no error message may suggest it (a message
    # names a file the user gave; the way out is always a new path).
    root = Path(__file__).resolve().parents[2] / "src" / "ragaudit"
    offenders = [
        f"{path.relative_to(root)}:{number}"
        for path in root.rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "--rebuild" in line
        and line.strip() != '"--rebuild",'  # the option's own declaration
        and not any(ok in line for ok in ("click.option", "unless --rebuild", "--rebuild replaces"))
    ]
    assert offenders == []
