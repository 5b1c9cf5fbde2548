"""The generator protocol and the offline extractive reader.

A generator turns a question and the retrieved context into a :class:`Generation`.  The LLM
generator lives in :mod:`ragaudit.pipeline.llm_generator` (extra ``llm``); this module holds the
protocol and :class:`ExtractiveReader`, a deterministic reader that needs no model, so the
whole pipeline can run offline and give byte-identical results.

The extractive reader's algorithm
---------------------------------
1. **Sentences.**  Each context chunk is cut into candidate sentences: blank lines, bullet
   items, table rows and sentence punctuation end a sentence; markdown header lines are not
   candidates but are remembered as the *section title* of the sentences below them.
2. **Question terms.**  The question's content terms ``Q`` (see :mod:`ragaudit._text`),
   each weighted by its inverse document frequency over the corpus chunks,
   ``w_t = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))`` with ``n_t >= 1``; terms the question writes
   with a capital
   letter (names, products) or as digits count 1.5 times.
3. **Support.**  A sentence ``s`` under title ``h`` scores

   .. math:: \\mathrm{support}(s) = \\frac{\\sum_{t \\in Q \\cap s} w_t
             + \\tfrac12 \\sum_{t \\in Q \\cap h \\setminus s} w_t}{\\sum_{t \\in Q} w_t}
             + 0.1\\,[\\text{the question asks for a quantity and } s \\text{ states one}]

   Ties go to the earlier chunk, then the earlier sentence.
4. **Answer or abstain.**  When the best support is below ``threshold`` (0.5) the reader
   answers exactly :data:`REFUSAL`.  Otherwise it answers with the best sentence, plus the
   next-best one when that adds at least 0.2 of the question's weight the first lacks, each
   followed by ``[n]``, ``n`` the 1-based position of its chunk in the context.

5. **Temperature (off by default).**  With ``temperature`` :math:`T > 0` the best sentence
   is not the top-scoring one but a draw from :math:`P(s) \\propto
   \\exp(\\mathrm{support}(s) / T)` (the Gumbel-max trick: the argmax of
   :math:`\\mathrm{support}(s)/T + G_s`, :math:`G_s` standard Gumbel), seeded by the
   (question, repeat) unit's seed; the reader abstains when the drawn sentence's support is
   below ``threshold``.  Repeats of one question then differ where sentences are near-tied,
   as a sampled model's do, and the same seed gives the same answer.  At ``T = 0`` the seed is
   ignored and the answers are the deterministic ones.

It behaves like a plausible, imperfect reader: a distractor sentence that repeats the
question's words can beat the one holding the fact, and evidence phrased with other words
than the question's is not recognised, so it refuses.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ragaudit._text import REFUSAL, STOPWORDS, content_tokens, stem
from ragaudit.data.chunks import Chunk
from ragaudit.exceptions import InputError

__all__ = [
    "GENERATORS",
    "REFUSAL",
    "ExtractiveReader",
    "Generation",
    "Generator",
    "split_sentences",
]

GENERATORS: tuple[str, ...] = ("extractive", "openai")

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADER = re.compile(r"^\s{0,3}#{1,6}\s+")
_QUANTITY = re.compile(
    r"\b(how (many|much|long|often|soon|far|old|large|big)|what (percentage|percent|year|date|"
    r"time|day|amount|number|size)|when|which year|deadline|limit)\b",
    re.IGNORECASE,
)
_HAS_NUMBER = re.compile(
    r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|forty|fifty|sixty|hundred|thousand|once|twice|half|quarter|daily|weekly|monthly|"
    r"annually|yearly)\b",
    re.IGNORECASE,
)
_CAPITALISED_OR_NUMBER = re.compile(r"\b(?:[A-Z][\w-]*|\d[\d,.]*)")


@dataclass(frozen=True)
class Generation:
    """What a generator returns.

    Attributes
    ----------
    answer : str
        The answer text (``REFUSAL`` when the generator abstains).
    abstained : bool
        Whether the generator declined to answer.
    citations : list of int
        1-based positions of the context chunks the answer cites.
    usage : dict or None
        Token counts or cost for model-backed generators.
    error : str or None
        Why generation failed (the row is then kept, flagged, and not judged).
    latency_ms : dict or None
        Timings the generator measured itself (a live pipeline times its own call); when set
        they replace the harness's ``retrieve``/``generate`` timings in the row.
    row_extra : dict or None
        Further keys of the row (a live pipeline's ``context_match`` counts).
    """

    answer: str
    abstained: bool
    citations: list[int] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    error: str | None = None
    latency_ms: dict[str, float] | None = None
    row_extra: dict[str, Any] | None = None


@runtime_checkable
class Generator(Protocol):
    """What the harness needs from a generator.

    A generator whose ``takes_seed`` attribute is true is called as ``generate(question,
    context, seed=seed)`` with the seed of the (question, repeat) unit
    (:func:`ragaudit.pipeline.executors.unit_seed`); one whose ``takes_repeat`` is true also
    gets ``repeat=`` (the unit's 0-based repeat number).
    """

    def generate(self, question: str, context: list[Chunk]) -> Generation:
        """Answer ``question`` from ``context`` (chunks in rank order)."""
        ...


@dataclass(frozen=True)
class _Sentence:
    text: str
    title: str
    position: int  # 1-based chunk position in the context
    order: int  # sentence order within the context


def split_sentences(text: str) -> list[tuple[str, str]]:
    """Cut chunk text into ``(sentence, section title)`` pairs.

    Paragraph lines are re-joined before splitting, bullets and table rows stand alone, and a
    header line becomes the title of what follows it.

    Examples
    --------
    >>> split_sentences("# Leave\\nYou get twenty days.\\nCarry over five.\\n- Ask early.")
    [('You get twenty days.', 'Leave'), ('Carry over five.', 'Leave'), ('Ask early.', 'Leave')]
    """
    units: list[tuple[str, str]] = []
    title = ""
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            joined = " ".join(paragraph)
            units.extend((s.strip(), title) for s in _SENTENCE_END.split(joined) if s.strip())
            paragraph.clear()

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            flush()
        elif _HEADER.match(line):
            flush()
            title = _HEADER.sub("", line).strip()
        elif line.startswith("|"):
            flush()
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):  # skip |---|---| rules
                units.append((" | ".join(c for c in cells if c), title))
        elif _BULLET.match(line):
            flush()
            paragraph.append(_BULLET.sub("", line))
        else:
            paragraph.append(line)
    flush()
    return units


def _cite(sentence: str, position: int) -> str:
    if sentence[-1:] in ".!?":
        return f"{sentence[:-1]} [{position}]{sentence[-1]}"
    return f"{sentence} [{position}]"


class ExtractiveReader:
    """A deterministic, offline reader that answers with the best-supported context sentence.

    See the module docstring for the algorithm.

    Parameters
    ----------
    document_frequency : mapping of str to int, optional
        Term -> number of corpus chunks containing it (see :meth:`fit`).  Without it, IDF is
        computed over the context's sentences.
    n_documents : int, optional
        Number of chunks the document frequencies were counted over.
    threshold : float, default 0.5
        Minimum support to answer instead of abstaining.
    temperature : float, default 0.0
        0 answers deterministically; above 0 the best sentence is drawn with probability
        proportional to ``exp(support / temperature)`` from the seed given to
        :meth:`generate` (module docstring, step 5).

    Examples
    --------
    >>> context = [Chunk("c1", "it", 0, "# Laptops\\nLaptops are replaced every three years."),
    ...            Chunk("c2", "hr", 0, "The canteen opens at noon.")]
    >>> reader = ExtractiveReader.fit(context)
    >>> reader.generate("How often are laptops replaced?", context).answer
    'Laptops are replaced every three years [1].'
    >>> reader.generate("What is the parental leave policy?", context).answer
    "I don't know - the documents do not cover this."
    """

    def __init__(
        self,
        document_frequency: dict[str, int] | None = None,
        n_documents: int | None = None,
        *,
        threshold: float = 0.5,
        temperature: float = 0.0,
    ) -> None:
        if not 0.0 <= threshold <= 2.0:
            raise InputError(f"threshold: expected a number in [0, 2], found {threshold!r}")
        if not (
            isinstance(temperature, (int, float))
            and not isinstance(temperature, bool)
            and 0.0 <= temperature <= 10.0
        ):
            raise InputError(f"temperature: expected a number in [0, 10], found {temperature!r}")
        self.threshold = threshold
        self.temperature = float(temperature)
        self._df = dict(document_frequency or {})
        self._n = int(n_documents or 0)

    @property
    def takes_seed(self) -> bool:
        """Whether the harness passes the unit's seed: only a reader with a temperature draws."""
        return self.temperature > 0

    @classmethod
    def fit(
        cls, chunks: Sequence[Chunk], *, threshold: float = 0.5, temperature: float = 0.0
    ) -> ExtractiveReader:
        """A reader whose IDF weights come from the corpus chunks."""
        df: Counter[str] = Counter()
        for chunk in chunks:
            df.update(set(content_tokens(chunk.text)))
        return cls(dict(df), len(chunks), threshold=threshold, temperature=temperature)

    def _weights(self, question: str, sentences: Sequence[_Sentence]) -> dict[str, float]:
        terms = list(dict.fromkeys(content_tokens(question)))
        if self._n:
            df, n = self._df, self._n
        else:
            counts: Counter[str] = Counter()
            for s in sentences:
                counts.update(set(content_tokens(s.text)))
            df, n = dict(counts), max(len(sentences), 1)
        emphasised = {
            stem(m.group(0).lower().replace(",", ""))
            for m in _CAPITALISED_OR_NUMBER.finditer(question)
            if m.start() > 0 and m.group(0).lower() not in STOPWORDS
        }
        weights: dict[str, float] = {}
        for t in terms:
            # A term the corpus never uses weighs as much as one used once, not more:
            # otherwise one odd question word would make every sentence look unsupported.
            n_t = max(df.get(t, 0), 1)
            w = math.log(1.0 + (n - n_t + 0.5) / (n_t + 0.5))
            weights[t] = w * (1.5 if t in emphasised else 1.0)
        return weights

    def generate(
        self, question: str, context: list[Chunk], *, seed: int | None = None
    ) -> Generation:
        """Answer from the best-supported sentence(s), or abstain (see the module docstring).

        ``seed`` drives the draw when ``temperature > 0`` (default 0); it is ignored at 0.
        """
        sentences = [
            _Sentence(text, title, position, order)
            for order, (position, text, title) in enumerate(
                (p, t, h)
                for p, chunk in enumerate(context, start=1)
                for t, h in split_sentences(chunk.text)
            )
        ]
        if not sentences:
            return Generation(REFUSAL, True, [])
        weights = self._weights(question, sentences)
        total = sum(weights.values())
        if total <= 0:
            return Generation(REFUSAL, True, [])
        wants_quantity = bool(_QUANTITY.search(question))
        scored: list[tuple[float, int, set[str], _Sentence]] = []
        for s in sentences:
            terms = set(content_tokens(s.text)) & weights.keys()
            title_terms = (set(content_tokens(s.title)) & weights.keys()) - terms
            support = (
                sum(weights[t] for t in terms) + 0.5 * sum(weights[t] for t in title_terms)
            ) / total
            if wants_quantity and _HAS_NUMBER.search(s.text):
                support += 0.1
            scored.append((support, s.order, terms, s))
        scored.sort(key=lambda item: (-item[0], item[1]))
        if self.temperature > 0 and len(scored) > 1:
            scored.insert(0, scored.pop(self._draw([x[0] for x in scored], seed)))
        best_support, _, best_terms, best = scored[0]
        if best_support < self.threshold:
            return Generation(REFUSAL, True, [])
        chosen = [best]
        for support, _, terms, candidate in scored[1:]:
            added = sum(weights[t] for t in terms - best_terms) / total
            if added >= 0.2 and support >= 0.8 * self.threshold:
                chosen.append(candidate)
                break
        chosen.sort(key=lambda s: s.order)
        answer = " ".join(_cite(s.text, s.position) for s in chosen)
        citations = sorted({s.position for s in chosen})
        return Generation(answer, False, citations)

    def _draw(self, supports: list[float], seed: int | None) -> int:
        """Index of the sentence drawn with probability ``softmax(supports / temperature)``
        (Gumbel-max: argmax of ``support / T + G``, G standard Gumbel, from ``seed``)."""
        import numpy as np  # here: `ragaudit run --help` imports GENERATORS from this module

        rng = np.random.default_rng(0 if seed is None else seed)
        keys = np.asarray(supports) / self.temperature + rng.gumbel(size=len(supports))
        return int(np.argmax(keys))
