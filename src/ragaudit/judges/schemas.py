"""The JSON each LLM judge must return, as small pydantic models, plus the checks pydantic
cannot express (citation pairs covered exactly once, chunk indices in range).

pydantic belongs to the optional extra ``llm``, so the models are built on first use, never at
import time.  Every ``parse_*`` function takes the decoded JSON object and returns a validated
model, or raises :class:`~ragaudit.llm.replies.InvalidReply` with a message short enough to send
back to the model in the retry turn.
"""

# No ``from __future__ import annotations`` here: pydantic reads the annotations at runtime.

import functools
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from ragaudit._io import require
from ragaudit.llm.replies import InvalidReply

__all__ = [
    "MAX_ITEMS",
    "json_schema",
    "models",
    "parse_citations",
    "parse_correctness",
    "parse_faithfulness",
    "parse_labels",
    "parse_pairwise",
    "parse_relevance",
    "parse_sufficiency",
]


@functools.lru_cache(maxsize=1)
def models() -> SimpleNamespace:
    """Build (once) and return the pydantic models, as attributes of a namespace.

    Examples
    --------
    >>> m = models()
    >>> m.Relevance.model_validate({"score": 4, "reason": "on topic"}).score
    4
    """
    require("pydantic", extra="llm", feature="the LLM judge stage")
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    config = ConfigDict(extra="ignore")

    class Fact(BaseModel):
        model_config = config
        fact: str
        in_context: bool

    class Sufficiency(BaseModel):
        model_config = config
        facts: list[Fact] = Field(min_length=1)

    class Correctness(BaseModel):
        model_config = config
        verdict: Literal["correct", "partial", "wrong"]
        completeness: float = Field(ge=0.0, le=1.0)
        numbers_match: bool
        reason: str = ""

    class Claim(BaseModel):
        model_config = config
        claim: str
        supported: bool

    class Faithfulness(BaseModel):
        model_config = config
        claims: list[Claim]

    class CitationVerdict(BaseModel):
        model_config = config
        sentence: int
        chunk: int
        supported: bool

    class Citations(BaseModel):
        model_config = config
        verdicts: list[CitationVerdict]

    class Relevance(BaseModel):
        model_config = config
        score: int = Field(ge=1, le=5)
        reason: str = ""

    class Pairwise(BaseModel):
        model_config = config
        winner: Literal["A", "B", "tie"]
        reason: str = ""

    class Labels(BaseModel):
        model_config = config
        answer_chunks: list[int]
        supporting_chunks: list[int] = Field(default_factory=list)

    return SimpleNamespace(
        Fact=Fact,
        Sufficiency=Sufficiency,
        Correctness=Correctness,
        Claim=Claim,
        Faithfulness=Faithfulness,
        CitationVerdict=CitationVerdict,
        Citations=Citations,
        Relevance=Relevance,
        Pairwise=Pairwise,
        Labels=Labels,
    )


#: The longest list each verdict may hold in ``json_schema`` mode (``maxItems``): a bound a
#: grammar-constrained server enforces, so a small model cannot loop on a list until the token
#: cap.  Generous for real answers: a reference answer has a handful of atomic facts.
MAX_ITEMS: dict[str, int] = {
    "Sufficiency": 12,
    "Faithfulness": 16,
    "Citations": 32,
    "Labels": 32,
}


def _strict(node: Any, defs: dict[str, Any], max_items: int | None) -> Any:
    """A pydantic JSON schema node in the subset strict structured output accepts: ``$ref``
    inlined, every property required, no extra properties, no titles or defaults."""
    if isinstance(node, list):
        return [_strict(item, defs, max_items) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _strict(defs[node["$ref"].rsplit("/", 1)[-1]], defs, max_items)
    out = {
        key: _strict(value, defs, max_items)
        for key, value in node.items()
        if key not in ("title", "default", "$defs")
    }
    if out.get("type") == "object":
        out["required"] = list(out.get("properties", {}))
        out["additionalProperties"] = False
    if out.get("type") == "array" and max_items is not None:
        out["maxItems"] = max_items
    return out


@functools.cache
def _json_schema(model_name: str, max_items: int | None) -> dict[str, Any]:
    raw = getattr(models(), model_name).model_json_schema()
    schema = _strict(raw, raw.get("$defs", {}), max_items)
    return {"name": model_name.lower(), "schema": schema}


def json_schema(model_name: str, max_items: int | None = None) -> dict[str, Any]:
    """The ``response_format`` schema of a verdict model: ``{"name", "schema"}``.

    Built from the pydantic model (one source for the request and the validation), in the
    strict subset OpenAI and llama.cpp both accept; arrays get ``maxItems`` (``max_items``,
    else :data:`MAX_ITEMS`).  Optional fields such as ``reason`` become required: a strict
    server then always sends them, which the parser accepts.

    Examples
    --------
    >>> s = json_schema("Relevance")
    >>> s["name"], s["schema"]["required"], s["schema"]["additionalProperties"]
    ('relevance', ['score', 'reason'], False)
    >>> json_schema("Sufficiency")["schema"]["properties"]["facts"]["maxItems"]
    12
    """
    cap = max_items if max_items is not None else MAX_ITEMS.get(model_name)
    return _json_schema(model_name, cap)


def _validate(model_name: str, value: Any) -> Any:
    pydantic = require("pydantic", extra="llm", feature="the LLM judge stage")
    model = getattr(models(), model_name)
    try:
        return model.model_validate(value)
    except pydantic.ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors()[:5]
        ]
        raise InvalidReply("the JSON does not match the schema: " + "; ".join(problems)) from None


def parse_sufficiency(value: Any) -> Any:
    """Validate a sufficiency verdict: ``{"facts": [{"fact", "in_context"}, ...]}``, >= 1 fact.

    >>> parse_sufficiency({"facts": []})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ragaudit.llm.replies.InvalidReply: the JSON does not match the schema: facts: List should ...
    """
    return _validate("Sufficiency", value)


def parse_correctness(value: Any) -> Any:
    """Validate a correctness verdict; ``"correct"`` with ``numbers_match=false`` is refused.

    >>> parse_correctness({"verdict": "correct", "completeness": 1, "numbers_match": False})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ragaudit.llm.replies.InvalidReply: verdict "correct" contradicts numbers_match=false: ...
    """
    verdict = _validate("Correctness", value)
    if verdict.verdict == "correct" and not verdict.numbers_match:
        raise InvalidReply(
            'verdict "correct" contradicts numbers_match=false: a number that differs makes '
            "the answer wrong"
        )
    return verdict


def parse_faithfulness(value: Any) -> Any:
    """Validate ``{"claims": [{"claim", "supported"}, ...]}`` (an empty list is allowed)."""
    return _validate("Faithfulness", value)


def parse_relevance(value: Any) -> Any:
    """Validate ``{"score": 1..5, "reason": str}``."""
    return _validate("Relevance", value)


def parse_pairwise(value: Any) -> Any:
    """Validate ``{"winner": "A" | "B" | "tie", "reason": str}``.

    >>> parse_pairwise({"winner": "B"}).winner
    'B'
    """
    return _validate("Pairwise", value)


def parse_citations(value: Any, expected_pairs: Sequence[tuple[int, int]]) -> Any:
    """Validate citation verdicts: exactly one per expected ``(sentence, chunk)`` pair.

    >>> parse_citations({"verdicts": [{"sentence": 1, "chunk": 2, "supported": True}]},
    ...                 [(1, 2), (2, 1)])
    Traceback (most recent call last):
    ...
    ragaudit.llm.replies.InvalidReply: missing verdicts for (sentence, chunk) pairs: (2, 1)
    """
    parsed = _validate("Citations", value)
    expected = set(expected_pairs)
    seen: dict[tuple[int, int], int] = {}
    for verdict in parsed.verdicts:
        pair = (verdict.sentence, verdict.chunk)
        seen[pair] = seen.get(pair, 0) + 1
    problems = []
    missing = sorted(expected - set(seen))
    extra = sorted(set(seen) - expected)
    repeated = sorted(p for p, count in seen.items() if count > 1 and p in expected)
    if missing:
        problems.append("missing verdicts for (sentence, chunk) pairs: " + _pairs(missing))
    if extra:
        problems.append("verdicts for pairs that were not asked: " + _pairs(extra))
    if repeated:
        problems.append("more than one verdict for: " + _pairs(repeated))
    if problems:
        raise InvalidReply("; ".join(problems))
    return parsed


def parse_labels(value: Any, n_chunks: int) -> Any:
    """Validate chunk labels: every index an integer in ``1..n_chunks``.

    >>> parse_labels({"answer_chunks": [2, 7], "supporting_chunks": []}, 5)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ragaudit.llm.replies.InvalidReply: chunk numbers out of range (there are 5 chunks, ...): 7
    """
    parsed = _validate("Labels", value)
    bad = sorted(
        {i for i in [*parsed.answer_chunks, *parsed.supporting_chunks] if not 1 <= i <= n_chunks}
    )
    if bad:
        raise InvalidReply(
            f"chunk numbers out of range (there are {n_chunks} chunks, numbered 1 to "
            f"{n_chunks}): {', '.join(map(str, bad))}"
        )
    return parsed


def _pairs(pairs: Sequence[tuple[int, int]]) -> str:
    return ", ".join(f"({s}, {c})" for s, c in pairs)
