"""Paths that would write or read outside what the user named are refused in one line;
stale temporary files of our own naming are cleaned on the next write."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaudit._io import STALE_TEMP_SECONDS, atomic_write_text
from ragaudit.cli import main
from ragaudit.exceptions import InputError
from ragaudit.pipeline.corpus import load_corpus

DATA = Path(__file__).resolve().parents[1] / "data" / "harness"
CORPUS, GOLDEN = DATA / "corpus", DATA / "golden.yaml"


def run(tmp_path: Path, *extra: str) -> tuple[int, str]:
    args = ["run", "--corpus", str(CORPUS), "--golden", str(GOLDEN), "--k", "2",
            "--chunk-size", "300", "--chunk-overlap", "0", "--no-timing", *extra]  # fmt: skip
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output


@pytest.mark.parametrize("name", ["../x", "a/b", "..", ".hidden", "/etc/x", "a\\b"])
def test_a_run_name_that_leaves_out_is_refused(tmp_path: Path, name: str) -> None:
    code, output = run(tmp_path, "--out", str(tmp_path / "out"), "--name", name)
    assert code == 2, output
    assert output == (
        f"ragaudit: error: --name: expected a file name (letters, digits, ._-), found {name!r}; "
        "the run is written inside --out\n"
    )
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "out").exists()


def test_out_below_a_file_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "FILE"
    blocker.write_text("not a folder")
    code, output = run(tmp_path, "--out", str(blocker / "x"), "--name", "r")
    assert code == 2, output
    assert output.startswith("ragaudit: error: ") and output.count("\n") == 1
    assert output.startswith(f"ragaudit: error: {blocker}")
    assert "expected a writable path, found a file where a directory should be" in output
    assert "Traceback" not in output
    assert blocker.read_text() == "not a folder"


def test_a_corpus_symlink_pointing_outside_is_refused(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("inside")
    secret = tmp_path / "secret.txt"
    secret.write_text("outside")
    (corpus / "b.txt").symlink_to(secret)
    with pytest.raises(InputError, match=r"b\.txt: a symbolic link to .*secret\.txt, outside"):
        load_corpus(corpus)


def test_a_corpus_symlink_inside_the_corpus_is_fine(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "sub" / "real.md").write_text("inside")
    (corpus / "a.md").symlink_to(corpus / "sub" / "real.md")
    assert [(d.doc_id, d.text) for d in load_corpus(corpus)] == [("a", "inside")]


def _age(path: Path, seconds: float) -> None:
    past = time.time() - seconds
    os.utime(path, (past, past))


def test_stale_temps_of_our_naming_are_removed_on_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    dead = tmp_path / ".run.json.999999999.abcd1234.tmp"  # a process id that cannot exist
    old_style = tmp_path / ".run.json.k2j3h4g5.tmp"  # the naming before process ids
    alive = tmp_path / f".run.json.{os.getpid()}.zzzz9999.tmp"  # a writer still running
    recent_old_style = tmp_path / ".run.json.q1w2e3r4.tmp"
    other = tmp_path / ".other.json.999999999.abcd1234.tmp"  # another target's
    foreign = tmp_path / "run.json.bak"
    for path in (dead, old_style, alive, recent_old_style, other, foreign):
        path.write_text("half")
    _age(old_style, 2 * 3600)
    atomic_write_text(target, "{}")
    assert target.read_text() == "{}"
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {"run.json", alive.name, recent_old_style.name, other.name, foreign.name}
    _age(alive, STALE_TEMP_SECONDS + 60)  # a day old: stale whoever owns the id
    atomic_write_text(target, "{}")
    assert alive.name not in {p.name for p in tmp_path.iterdir()}


def test_written_files_keep_the_normal_mode(tmp_path: Path) -> None:
    atomic_write_text(tmp_path / "a.json", "{}")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o666 & ~umask
