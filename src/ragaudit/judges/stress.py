"""Labelled rewrites of reference answers: the variants of the judge stress test.

Each answerable question's reference answer is rewritten by every *family* of rewrite that
applies to it.  A family either keeps the meaning (a judge should say "correct") or breaks it
(a judge should say "wrong"):

============================ ======= ===========================================================
family                       meaning rewrite
============================ ======= ===========================================================
``number_words``             kept    ``600`` -> ``six hundred``, ``three months`` -> ``3 months``,
                                     ``25th`` -> ``twenty-fifth``
``unit_conversion``          kept    ``30 minutes`` -> ``half an hour`` / ``0.5 hours``,
                                     ``72 hours`` -> ``3 days``, ``-40 °C`` -> ``-40 °F``
``currency_name``            kept    ``210 EUR`` -> ``210 euros`` / ``€210``
``date_rewrite``             kept    ``10:00`` -> ``10 a.m.``, ``31 March`` -> ``March 31``
``reordered_clauses``        kept    two coordinated parts or clauses swapped, a trailing
                                     phrase moved to the front
``added_sentence``           kept    a true sentence of the question's source document appended
``changed_number``           broken  a number of the key part changed (``14`` -> ``15``)
``changed_unit``             broken  ``30 days`` -> ``30 weeks``
``changed_currency``         broken  ``210 EUR`` -> ``210 USD``, ``€`` -> ``$``
``changed_rate``             broken  ``per minute`` -> ``per hour``, ``monthly`` -> ``yearly``
``changed_weekday_month``    broken  ``Monday`` -> ``Thursday``, ``March`` -> ``June``
``other_entity``             broken  a name replaced by another name of the corpus seen after
                                     the same word (``in Waypoint`` -> ``in Tally``)
``swapped_values``           broken  two quantities of one kind swapped (RPO <-> RTO values)
``flipped_polarity``         broken  ``must`` -> ``must not``, ``at least`` -> ``at most``,
                                     ``No.`` -> ``Yes.``
``dropped_fact``             broken  the part holding the last of two or more keywords removed
``refusal``                  broken  a refusal ("The documents don't say.")
============================ ======= ===========================================================

A meaning-breaking rewrite changes the **key part**: a part of a clause (split at sentence
ends, ``;``, parentheses and ", ") that holds one of the question's keywords, or any clause
when there are no keywords.  So "70 EUR per day (domestic trips get 55 EUR)" breaks at 70, not
at 55, and "The lab is in Kellsport, a standard city, so the cap is 140 EUR" at the cap, not
at the city: a wrong aside is not what the question asks.  A meaning-keeping rewrite prefers
the key part and falls back to the rest.  Which candidate a family rewrites is drawn from
``random.Random(f"{seed}:{question_id}:{family}")``, so each variant depends on the seed, the
question and the family alone.

The tables and the text scanning are this package's own (:mod:`ragaudit.judges.stress_tables`,
:mod:`ragaudit.judges.stress_scan`), written without the judges' parsers and forbidden to
import them, so the test cannot pass by sharing code with what it tests.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ragaudit.exceptions import InputError
from ragaudit.judges.stress_broken import BROKEN
from ragaudit.judges.stress_rewrites import KEPT, Reference, Rewrite

__all__ = ["FAMILIES", "MEANING", "Variant", "VariantSet", "make_variants", "reference_variants"]

#: Every family, meaning-kept first, in the order they are reported.
FAMILIES: tuple[str, ...] = (*KEPT, *BROKEN)
#: family -> "kept" or "broken".
MEANING: dict[str, str] = {**dict.fromkeys(KEPT, "kept"), **dict.fromkeys(BROKEN, "broken")}
_REWRITE: dict[str, Callable[[Reference, random.Random], Rewrite | None]] = {**KEPT, **BROKEN}


@dataclass(frozen=True)
class Variant:
    """One rewritten reference answer.

    Attributes
    ----------
    question_id, family : str
    text : str
        The rewritten answer.
    expected : bool
        True when the meaning is kept (a judge should say correct), False when broken.
    change : str
        What was rewritten (``"600 -> six hundred"``).
    seed : int
    """

    question_id: str
    family: str
    text: str
    expected: bool
    change: str
    seed: int

    @property
    def meaning(self) -> str:
        """``"kept"`` or ``"broken"``."""
        return MEANING[self.family]

    def to_dict(self) -> dict[str, object]:
        """The variant as JSON-ready fields."""
        return {
            "question_id": self.question_id, "family": self.family, "meaning": self.meaning,
            "expected": "correct" if self.expected else "wrong", "text": self.text,
            "change": self.change, "seed": self.seed,
        }  # fmt: skip


@dataclass(frozen=True)
class VariantSet:
    """The variants of a golden set, and what could not be made.

    ``skipped`` counts, per family, the answerable references it could not rewrite (nothing
    to rewrite: no number, no unit, ...); ``unanswerable`` counts the questions without a
    reference to rewrite.
    """

    variants: tuple[Variant, ...]
    skipped: dict[str, int]
    n_references: int
    unanswerable: int
    seed: int


def reference_variants(
    question_id: str,
    reference: str,
    *,
    keywords: Sequence[str] = (),
    documents: Sequence[str] = (),
    entity_texts: Sequence[str] = (),
    families: Sequence[str] = FAMILIES,
    seed: int = 0,
) -> tuple[list[Variant], list[str]]:
    """The variants of one reference answer, and the families that could not rewrite it.

    Parameters
    ----------
    question_id, reference : str
    keywords : sequence of str
        The golden question's keywords: they mark the key part.
    documents : sequence of str
        The texts of the question's source documents (``added_sentence`` draws from them).
    entity_texts : sequence of str
        Texts whose names ``other_entity`` may put in place of the reference's (the corpus).
    families : sequence of str, default every family
    seed : int

    Examples
    --------
    >>> made, skipped = reference_variants("q1", "At most 600 requests per minute.",
    ...     families=["number_words", "changed_rate", "changed_currency"])
    >>> [(v.family, v.text, v.expected) for v in made]
    [('number_words', 'At most six hundred requests per minute.', True), \
('changed_rate', 'At most 600 requests per hour.', False)]
    >>> skipped
    ['changed_currency']
    """
    unknown = [f for f in families if f not in MEANING]
    if unknown:
        raise InputError(f"families: expected names among {', '.join(FAMILIES)}, found {unknown}")
    ref = Reference(reference, tuple(keywords), tuple(documents), tuple(entity_texts))
    made, skipped = [], []
    for family in families:
        rng = random.Random(f"{seed}:{question_id}:{family}")
        rewrite = _REWRITE[family](ref, rng)
        if rewrite is None or _same(rewrite.text, reference):
            skipped.append(family)
            continue
        made.append(Variant(question_id, family, rewrite.text, MEANING[family] == "kept",
                            rewrite.change, seed))  # fmt: skip
    return made, skipped


def _same(a: str, b: str) -> bool:
    return re.sub(r"\s+", " ", a).strip() == re.sub(r"\s+", " ", b).strip()


def make_variants(
    golden: Sequence[object],
    documents: Mapping[str, str] | None = None,
    *,
    families: Sequence[str] = FAMILIES,
    seed: int = 0,
) -> VariantSet:
    """Every variant of every answerable question of a golden set.

    Parameters
    ----------
    golden : sequence of GoldenQuestion
        Questions with ``id``, ``answer``, ``answerable``, ``keywords``, ``sources`` and
        ``reference_contexts``.
    documents : mapping of str to str, optional
        The corpus, document id -> text.  Without it, a question's reference contexts stand
        in for its documents, and the golden set's other references for the corpus's names.
    families : sequence of str, default every family
    seed : int

    Examples
    --------
    >>> from ragaudit.data.golden import GoldenQuestion
    >>> q = GoldenQuestion("q1", "How fast?", "Within 5 minutes.", ("runbook",),
    ...                    keywords=("5 minutes",))
    >>> s = make_variants([q], {"runbook": "Page the on-call engineer within five minutes of "
    ...                         "an alert firing."}, families=["unit_conversion",
    ...                         "added_sentence", "refusal"], seed=3)
    >>> [v.family for v in s.variants], s.skipped
    (['unit_conversion', 'added_sentence', 'refusal'], {'unit_conversion': 0, \
'added_sentence': 0, 'refusal': 0})
    >>> s.variants[0].text
    'Within 300 seconds.'
    """
    corpus = dict(documents or {})
    names = list(corpus.values()) or [str(getattr(q, "answer", "")) for q in golden]
    variants: list[Variant] = []
    skipped = dict.fromkeys(families, 0)
    n_references = unanswerable = 0
    for question in golden:
        answer = str(getattr(question, "answer", "") or "")
        if not getattr(question, "answerable", True) or not answer.strip():
            unanswerable += 1
            continue
        n_references += 1
        sources = [corpus[s] for s in getattr(question, "sources", ()) if s in corpus]
        if not corpus:
            sources = list(getattr(question, "reference_contexts", ()))
        made, missed = reference_variants(
            str(getattr(question, "id", "")), answer,
            keywords=tuple(getattr(question, "keywords", ())), documents=sources,
            entity_texts=names, families=families, seed=seed,
        )  # fmt: skip
        variants.extend(made)
        for family in missed:
            skipped[family] += 1
    return VariantSet(tuple(variants), skipped, n_references, unanswerable, seed)
