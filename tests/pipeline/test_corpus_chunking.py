import hashlib
import itertools
import uuid

import pytest

from ragaudit.data.chunks import CHUNK_NAMESPACE, Chunk, Document, chunk_id, chunk_to_doc
from ragaudit.exceptions import InputError
from ragaudit.pipeline.chunking import chunk_document, chunk_documents, split_fixed
from ragaudit.pipeline.corpus import corpus_sha256, load_corpus

LOREM = " ".join(f"word{i:03d}" for i in range(300))  # 2399 characters, 8 per word + space


def test_corpus_reads_md_and_txt_sorted_with_stem_ids(tmp_path):
    (tmp_path / "b.md").write_text("# B\nbee", encoding="utf-8")
    (tmp_path / "a.txt").write_text("ay", encoding="utf-8")
    (tmp_path / "ignored.pdf").write_bytes(b"%PDF")
    docs = load_corpus(tmp_path)
    assert [(d.doc_id, d.text) for d in docs] == [("a", "ay"), ("b", "# B\nbee")]


def test_non_utf8_file_is_named_in_the_error(tmp_path):
    (tmp_path / "good.md").write_text("fine", encoding="utf-8")
    (tmp_path / "bad.md").write_bytes(b"caf\xe9")
    with pytest.raises(
        InputError,
        match=r"bad\.md:1: expected UTF-8 text, found byte 0xe9; re-save the file as UTF-8",
    ):
        load_corpus(tmp_path)


def test_empty_corpus_and_missing_directory_are_errors(tmp_path):
    with pytest.raises(InputError, match=r"empty corpus: expected at least one \.md or \.txt file"):
        load_corpus(tmp_path)
    with pytest.raises(InputError, match="found no such directory"):
        load_corpus(tmp_path / "nope")


def test_duplicate_stems_are_an_error(tmp_path):
    (tmp_path / "x.md").write_text("1", encoding="utf-8")
    (tmp_path / "x.txt").write_text("2", encoding="utf-8")
    with pytest.raises(InputError, match="document id 'x' is also used by"):
        load_corpus(tmp_path)


def test_corpus_hash_ignores_paths_and_order_but_not_text():
    a = [Document("a", "x", "/p/a.md"), Document("b", "y")]
    assert corpus_sha256(a) == corpus_sha256(list(reversed(a)))
    assert corpus_sha256(a) != corpus_sha256([Document("a", "x"), Document("b", "y!")])


def test_chunk_id_is_uuid5_of_doc_index_and_text_hash():
    # Written out independently of the implementation: the documented formula.
    text = "Laptops are replaced every 3 years."
    expected = uuid.uuid5(
        uuid.uuid5(uuid.NAMESPACE_URL, "https://ragaudit.invalid/chunk"),
        "it\x1f2\x1f" + hashlib.sha256(text.encode()).hexdigest(),
    )
    assert chunk_id("it", 2, text) == str(expected)
    assert uuid.uuid5(uuid.NAMESPACE_URL, "https://ragaudit.invalid/chunk") == CHUNK_NAMESPACE


def test_chunk_ids_are_stable_across_calls_and_change_with_any_edit():
    doc = Document("d", LOREM)
    first = [c.chunk_id for c in chunk_document(doc, 200, 50)]
    again = [c.chunk_id for c in chunk_document(Document("d", LOREM), 200, 50)]
    assert first == again
    assert len(set(first)) == len(first)
    edited = LOREM.replace("word299", "word29X")
    changed = [c.chunk_id for c in chunk_document(Document("d", edited), 200, 50)]
    assert changed[:-1] == first[:-1] and changed[-1] != first[-1]
    renamed = [c.chunk_id for c in chunk_document(Document("e", LOREM), 200, 50)]
    assert not set(renamed) & set(first)


def test_fixed_chunks_respect_size_overlap_and_cover_the_text():
    pieces = split_fixed(LOREM, 200, 50)
    assert all(len(p) <= 200 for p in pieces)
    for left, right in itertools.pairwise(pieces):
        # consecutive windows share at least the overlap, rounded down to whole words
        shared = set(left.split()) & set(right.split())
        assert len(shared) >= 50 // 8 - 1
    words = [w for p in pieces for w in p.split()]
    assert set(words) == set(LOREM.split())  # nothing lost, no word cut in half


def test_chunk_size_not_above_overlap_is_an_error():
    with pytest.raises(
        InputError,
        match=r"chunk_size: expected a value larger than chunk_overlap \(100\), found 100",
    ):
        chunk_documents([Document("d", "x")], 100, 100)
    with pytest.raises(InputError, match="chunk_overlap: expected an integer >= 0, found -1"):
        chunk_documents([Document("d", "x")], 100, -1)
    with pytest.raises(
        InputError, match="chunker: expected one of fixed, markdown, found 'semantic'"
    ):
        chunk_documents([Document("d", "x")], 100, 10, "semantic")


def test_markdown_chunks_never_straddle_a_header():
    text = "# A\n" + "alpha " * 50 + "\n## B\n" + "beta " * 10 + "\n## C\ngamma\n"
    chunks = chunk_document(Document("d", text), 120, 20, "markdown")
    for c in chunks:
        assert sum(word in c.text for word in ("alpha", "beta", "gamma")) == 1
    assert [c.index for c in chunks] == list(range(len(chunks)))
    fixed = chunk_document(Document("d", text), 120, 20, "fixed")
    assert any(("alpha" in c.text) and ("beta" in c.text) for c in fixed)


def test_chunk_to_doc_map():
    chunks = chunk_documents([Document("a", "one"), Document("b", "two")], 50, 0)
    assert chunk_to_doc(chunks) == {chunks[0].chunk_id: "a", chunks[1].chunk_id: "b"}
    assert isinstance(chunks[0], Chunk)
