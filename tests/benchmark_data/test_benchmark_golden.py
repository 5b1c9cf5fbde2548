"""Validate the bundled golden set against the bundled corpus.

These tests read the files as plain YAML/text on purpose: they check the *data*, so they must
not depend on the loaders they would otherwise be validating.  One test at the end also runs
the official loader, because that is what every user of the benchmark goes through.
"""

from __future__ import annotations

import re
from collections import Counter
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
import yaml

BENCHMARK = Path(str(files("ragaudit.benchmark")))
CORPUS = BENCHMARK / "corpus"
GOLDEN = BENCHMARK / "golden.yaml"

ALLOWED_TAGS = frozenset(
    {
        "numeric", "multi_doc", "conflict", "table", "multi_hop",
        "unanswerable", "definition", "procedure", "negation", "list",
    }
)  # fmt: skip
FIELDS = {"id", "question", "answer", "sources", "answerable", "keywords", "tags"}
# The FAQ is newer than the leave policy and wins every conflict between them.
NEWER_DOC = "11-employee-faq"


def normalise(text: str) -> str:
    """Case folded, commas dropped, whitespace runs as one space: "3,000\n EUR" -> "3000 eur"."""
    return re.sub(r"\s+", " ", text.casefold().replace(",", "")).strip()


def contains(haystack: str, keyword: str) -> bool:
    """Whether ``keyword`` occurs in ``haystack`` (both normalised) as whole words.

    Whole words, so that "6 weeks" is not found inside "16 weeks".
    """
    pattern = r"(?<![0-9a-z])" + re.escape(normalise(keyword)) + r"(?![0-9a-z])"
    return re.search(pattern, normalise(haystack)) is not None


def load_entries() -> list[dict[str, Any]]:
    data = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
    assert isinstance(data, list), f"golden.yaml: expected a list of questions, found {type(data)}"
    return data


def corpus_texts() -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.md"))}


ENTRIES = load_entries()
ANSWERABLE = [e for e in ENTRIES if e["answerable"]]
UNANSWERABLE = [e for e in ENTRIES if not e["answerable"]]


def test_matching_ignores_case_commas_and_spacing_but_not_word_boundaries():
    assert contains("a limit of 3000  EUR", "3,000 eur")
    assert contains("the Head of\n Department approves", "head of department")
    # A decimal point is not a thousands separator, and a word must not be part of another.
    assert not contains("0.32 EUR", "032 EUR")
    assert not contains("16 weeks on full pay", "6 weeks")
    assert not contains("restricted", "restrict")


@pytest.mark.parametrize("entry", ENTRIES, ids=[str(e.get("id")) for e in ENTRIES])
def test_entry_has_exactly_the_documented_fields_with_their_types(entry):
    assert set(entry) == FIELDS
    assert re.fullmatch(r"q\d{2}", entry["id"])
    for name in ("question", "answer"):
        assert isinstance(entry[name], str) and entry[name].strip(), name
    assert entry["question"].rstrip().endswith("?")
    assert isinstance(entry["answerable"], bool)
    for name in ("sources", "keywords", "tags"):
        assert isinstance(entry[name], list), name
        assert all(isinstance(x, str) and x.strip() for x in entry[name]), name
        assert len(set(entry[name])) == len(entry[name]), f"{name} has duplicates"


def test_ids_are_unique_and_numbered_in_order():
    ids = [e["id"] for e in ENTRIES]
    assert [i for i, n in Counter(ids).items() if n > 1] == []
    assert ids == [f"q{n:02d}" for n in range(1, len(ids) + 1)]


def test_questions_are_not_duplicated():
    questions = [normalise(e["question"]) for e in ENTRIES]
    assert len(set(questions)) == len(questions)


def test_size_meets_the_minimums():
    assert len(ANSWERABLE) >= 42
    assert len(UNANSWERABLE) >= 5


def test_every_source_is_a_corpus_document():
    doc_ids = set(corpus_texts())
    missing = {(e["id"], s) for e in ENTRIES for s in e["sources"] if s not in doc_ids}
    assert missing == set()


def test_every_document_is_the_source_of_some_question():
    cited = {s for e in ENTRIES for s in e["sources"]}
    assert set(corpus_texts()) - cited == set()


@pytest.mark.parametrize("entry", ANSWERABLE, ids=[e["id"] for e in ANSWERABLE])
def test_every_keyword_occurs_in_one_of_the_sources(entry):
    texts = corpus_texts()
    assert entry["sources"], "an answerable question needs at least one source"
    assert entry["keywords"], "an answerable question needs at least one keyword"
    sources = [texts[s] for s in entry["sources"]]
    absent = [k for k in entry["keywords"] if not any(contains(t, k) for t in sources)]
    assert absent == []


def test_keyword_check_catches_a_keyword_that_is_not_in_the_source():
    # The check above must be able to fail: "21 days" is not the leave entitlement.
    leave = corpus_texts()["03-leave-policy"]
    assert contains(leave, "27 days")
    assert not contains(leave, "21 days")


@pytest.mark.parametrize("entry", ANSWERABLE, ids=[e["id"] for e in ANSWERABLE])
def test_keywords_also_occur_in_the_reference_answer(entry):
    # The reference answer is what a judge compares against; it must state every keyword.
    assert [k for k in entry["keywords"] if not contains(entry["answer"], k)] == []


@pytest.mark.parametrize("entry", UNANSWERABLE, ids=[e["id"] for e in UNANSWERABLE])
def test_unanswerable_questions_have_no_sources_no_keywords(entry):
    assert entry["sources"] == []
    assert entry["keywords"] == []
    assert entry["tags"] == ["unanswerable"]


def test_tags_come_from_the_allowed_set():
    used = {t for e in ENTRIES for t in e["tags"]}
    assert used <= ALLOWED_TAGS, used - ALLOWED_TAGS
    assert all(e["tags"] for e in ENTRIES)
    assert all("unanswerable" not in e["tags"] for e in ANSWERABLE)


def test_multi_doc_questions_name_several_sources():
    multi = [e for e in ENTRIES if "multi_doc" in e["tags"]]
    assert len(multi) >= 5
    assert [e["id"] for e in multi if len(e["sources"]) < 2] == []


def test_the_mix_of_question_types():
    counts = Counter(t for e in ENTRIES for t in e["tags"])
    assert counts["conflict"] >= 3
    assert counts["table"] >= 3
    assert counts["multi_hop"] >= 3
    # Most questions are plain single-document lookups.
    single = [e for e in ANSWERABLE if len(e["sources"]) == 1]
    assert len(single) >= 0.75 * len(ANSWERABLE)


@pytest.mark.parametrize(
    "entry",
    [e for e in ENTRIES if "conflict" in e["tags"]],
    ids=[e["id"] for e in ENTRIES if "conflict" in e["tags"]],
)
def test_conflict_questions_are_answered_by_the_newer_faq(entry):
    texts = corpus_texts()
    assert entry["sources"] == [NEWER_DOC]
    # The older policy states something else, which is what makes the question a conflict.
    assert [k for k in entry["keywords"] if contains(texts["03-leave-policy"], k)] == []


def test_the_faq_says_it_wins_over_older_policies():
    faq = corpus_texts()[NEWER_DOC]
    assert "this FAQ is correct" in " ".join(faq.split())


def test_official_loader_accepts_the_golden_set():
    from ragaudit.data.golden import load_golden

    golden = load_golden(GOLDEN, doc_ids=set(corpus_texts()))
    assert [q.id for q in golden] == [e["id"] for e in ENTRIES]
    assert sum(q.answerable for q in golden) == len(ANSWERABLE)
