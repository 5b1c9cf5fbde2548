"""read_chunks: whole lines, one reused buffer, BOM, long lines, no final newline."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ragaudit.data.formats.chunked import read_chunks


def random_text(seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(int(rng.integers(0, 60))):
        width = int(rng.choice([0, 1, 5, 30, 200]))
        lines.append(bytes(rng.integers(97, 123, size=width, dtype=np.uint8)))
    return b"\n".join(lines)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("block_bytes", [1, 64, 100, 1 << 16])
@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("final_newline", [False, True])
def test_chunks_are_whole_lines_that_rebuild_the_file(
    tmp_path, seed, block_bytes, bom, final_newline
):
    body = random_text(seed)
    if final_newline and body:
        body += b"\n"
    path = tmp_path / "f.txt"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + body)
    pieces, offsets = [], []
    for chunk in read_chunks(path, block_bytes):
        data = chunk.data  # a copy: the buffer is reused by the next chunk
        assert data.endswith(b"\n") and len(data) == chunk.size
        assert chunk.count(b"\n") == data.count(b"\n")
        pieces.append(data)
        offsets.append(chunk.offset)
    expected = body if not body or body.endswith(b"\n") else body + b"\n"
    assert b"".join(pieces) == expected
    start = 3 if bom else 0
    assert offsets == [start + sum(map(len, pieces[:i])) for i in range(len(pieces))]


@pytest.mark.parametrize("block_bytes", [60, 1 << 16])
def test_small_chunks_code_questions_like_pyarrow_does(tmp_path, monkeypatch, block_bytes):
    # Chunks of up to _SMALL_CHUNK rows compare ids in Python, bigger ones in pyarrow: the
    # same codes and names either way, a question split inside a chunk included.
    from ragaudit.data.formats import chunked, iter_run_chunks, read_run_columns

    lines = [f"q{q % 7} Q0 d{i} {i} {i % 5}.5 t\n" for i, q in enumerate([1, 1, 2, 3, 3, 1] * 9)]
    lines += ["q-é Q0 x 1 1.0 t\n", "q-é Q0 y 2 2.0 t\n"]
    path = tmp_path / "run.txt"
    path.write_text("".join(lines), encoding="utf-8")
    results = []
    for small in (0, 1 << 15):
        monkeypatch.setattr(chunked, "_SMALL_CHUNK", small)
        cols = read_run_columns(path, block_bytes=block_bytes, duplicates="first")
        chunks = [
            (c.arrow_names().to_pylist(), c.keys.tolist())
            for c in iter_run_chunks(path, block_bytes=block_bytes)
        ]
        results.append((cols.qids, cols.offsets.tolist(), cols.row_order.tolist(), chunks))
    assert results[0] == results[1]
    assert results[0][0] == ("q1", "q2", "q3", "q-é")
    for names, keys in results[0][3]:
        assert len(set(names)) == len(names) and sorted(set(keys)) == list(range(len(names)))


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd")
def test_a_pipe_is_read_in_whole_blocks():
    # A pipe (``ragaudit evaluate <(zcat run.gz)``, /dev/stdin) reports size 0; the buffer is
    # still a whole block, not 64 bytes (which cut a 440k-line run into 220k chunks, 80 s).
    text = b"".join(b"q%d Q0 d%d %d 1.0 t\n" % (i // 10, i, i % 10) for i in range(1500))
    read_end, write_end = os.pipe()
    try:
        assert len(text) < 1 << 15
        os.write(write_end, text)  # below the pipe's 64 KiB buffer: no writer thread
        os.close(write_end)
        chunks = [
            bytes(chunk.data) for chunk in read_chunks(f"/dev/fd/{read_end}", block_bytes=1 << 20)
        ]
    finally:
        os.close(read_end)
    assert b"".join(chunks) == text
    assert len(chunks) == 1


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd")
@pytest.mark.parametrize("reader", ["read_trec_run", "read_run"])
def test_a_pipe_is_refused_by_the_readers_not_read_without_its_head(reader):
    # The readers sniff a file's head (delimiter, format), then open it again: a pipe's head
    # was gone by then, so its first 64 KiB of lines were dropped without a word.
    from ragaudit.data import formats
    from ragaudit.exceptions import FormatError

    text = b"".join(b"q%d Q0 d%d %d 1.0 t\n" % (i // 10, i, i % 10) for i in range(1500))
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, text)
        os.close(write_end)
        path = f"/dev/fd/{read_end}"
        message = r"^/dev/fd/\d+: expected a regular file, found a pipe"
        with pytest.raises(FormatError, match=message):
            getattr(formats, reader)(path)
    finally:
        os.close(read_end)
