"""A checkpoint whose last line was torn (inside a UTF-8 character, or anywhere) is resumed:
the torn line is dropped and its question redone, never a crash."""

from __future__ import annotations

import json

import pytest

from ragaudit.data.records import Checkpoint

CONFIG = {"k": 3}
ROWS = [
    {"id": "q1", "answer": "Café au lait ✓"},
    {"id": "q2", "answer": "Ünïcödé — 日本語 🙂"},
]


def _sidecar(tmp_path):
    sidecar = Checkpoint(tmp_path / "k3.partial.jsonl")
    sidecar.resume(CONFIG)
    for row in ROWS:
        sidecar.append(row)
    return sidecar


def test_every_cut_inside_the_last_line_drops_only_that_line(tmp_path):
    whole = _sidecar(tmp_path).path.read_bytes()
    last_start = whole.rstrip(b"\n").rfind(b"\n") + 1
    assert any(b >= 0x80 for b in whole[last_start:])  # multi-byte characters to cut inside
    for cut in range(last_start, len(whole)):  # every byte offset, the final newline excluded
        path = tmp_path / f"cut{cut}.partial.jsonl"
        path.write_bytes(whole[:cut])
        done = Checkpoint(path).resume(CONFIG)
        assert done == {("q1", 0): ROWS[0]}, cut
        # the file is rewritten clean, so the next append starts on its own line
        Checkpoint(path).append(ROWS[1])
        assert Checkpoint(path).resume(CONFIG) == {("q1", 0): ROWS[0], ("q2", 0): ROWS[1]}, cut


def test_a_whole_checkpoint_is_kept(tmp_path):
    sidecar = _sidecar(tmp_path)
    assert Checkpoint(sidecar.path).resume(CONFIG) == {("q1", 0): ROWS[0], ("q2", 0): ROWS[1]}


@pytest.mark.parametrize(
    "tail",
    [b'{"id": "q3", "answer": "caf\xc3', b"\xff\xfe garbage", b"[1, 2]", b'{"no_id": 1}', b"{"],
    ids=["cut-in-utf8", "not-utf8", "not-a-row", "row-without-id", "cut-json"],
)
def test_a_bad_last_line_of_any_kind_is_redone(tmp_path, tail):
    path = _sidecar(tmp_path).path
    path.write_bytes(path.read_bytes() + tail + b"\n")
    assert Checkpoint(path).resume(CONFIG) == {("q1", 0): ROWS[0], ("q2", 0): ROWS[1]}


def test_a_torn_header_starts_over(tmp_path):
    path = _sidecar(tmp_path).path
    header = path.read_bytes().split(b"\n")[0]
    path.write_bytes(header[: len(header) // 2])
    assert Checkpoint(path).resume(CONFIG) == {}
    assert json.loads(path.read_text(encoding="utf-8"))["config"] == CONFIG
