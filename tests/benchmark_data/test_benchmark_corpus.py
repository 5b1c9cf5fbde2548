"""Validate the bundled corpus: ids, encoding, structure and the mix of document lengths."""

from __future__ import annotations

import math
import re
from importlib.resources import files
from pathlib import Path

BENCHMARK = Path(str(files("ragaudit.benchmark")))
CORPUS = BENCHMARK / "corpus"
CHUNK_SIZE, CHUNK_OVERLAP = 800, 100


def approx_chunks(n_chars: int) -> int:
    """Windows of CHUNK_SIZE characters advancing by CHUNK_SIZE - CHUNK_OVERLAP.

    ceil((n - overlap) / (size - overlap)), at least 1; word-boundary snapping in the real
    chunker moves this by at most one window.
    """
    return max(1, math.ceil((n_chars - CHUNK_OVERLAP) / (CHUNK_SIZE - CHUNK_OVERLAP)))


def documents() -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.md"))}


def test_approx_chunks_formula():
    assert approx_chunks(800) == 1
    assert approx_chunks(801) == 2
    assert approx_chunks(100 + 6 * 700) == 6


def test_corpus_has_about_fourteen_markdown_documents_and_nothing_else():
    names = sorted(p.name for p in CORPUS.iterdir())
    assert all(n.endswith(".md") for n in names), names
    assert 12 <= len(names) <= 16


def test_document_ids_are_numbered_kebab_case():
    ids = list(documents())
    assert all(re.fullmatch(r"\d{2}-[a-z0-9]+(-[a-z0-9]+)*", i) for i in ids), ids
    numbers = [int(i[:2]) for i in ids]
    assert numbers == list(range(1, len(ids) + 1))


def test_documents_are_clean_utf8_markdown_with_a_title():
    for doc_id, text in documents().items():
        raw = (CORPUS / f"{doc_id}.md").read_bytes()
        assert not raw.startswith(b"\xef\xbb\xbf"), f"{doc_id}: byte order mark"
        assert b"\r" not in raw, f"{doc_id}: CRLF line endings"
        assert text.startswith("# "), f"{doc_id}: first line is not a title"
        assert text.endswith("\n") and not text.endswith("\n\n"), f"{doc_id}: trailing lines"
        assert all(line == line.rstrip() for line in text.splitlines()), f"{doc_id}: spaces"


def test_a_mix_of_long_and_short_documents():
    sizes = {d: approx_chunks(len(t)) for d, t in documents().items()}
    long_docs = [d for d, n in sizes.items() if 6 <= n <= 12]
    short_docs = [d for d, n in sizes.items() if n <= 2]
    assert len(long_docs) >= 4, sizes
    assert len(short_docs) >= 2, sizes
    assert max(sizes.values()) <= 12, sizes


def test_long_documents_have_several_sections():
    for doc_id, text in documents().items():
        if approx_chunks(len(text)) >= 6:
            sections = re.findall(r"^## ", text, flags=re.MULTILINE)
            assert len(sections) >= 5, doc_id


def test_the_corpus_has_tables():
    with_tables = [d for d, t in documents().items() if re.search(r"^\|.*\|$", t, re.MULTILINE)]
    assert len(with_tables) >= 4


def test_no_secrets_or_real_looking_contacts():
    # Fictional data only: e-mail domains are reserved (.example) or internal (.internal).
    for doc_id, text in documents().items():
        for domain in re.findall(r"[\w.-]+@(\w[\w-]*(?:\.\w[\w-]*)+)", text):
            assert domain.endswith(".example"), (doc_id, domain)
        for host in re.findall(r"\b[\w-]+\.([a-z]+)\.(\w+)\b", text):
            assert host[1] in {"internal", "example"}, (doc_id, host)
        assert not re.search(r"(?i)api[_ -]?key\s*[:=]", text), doc_id
