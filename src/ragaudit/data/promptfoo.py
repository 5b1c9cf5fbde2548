"""promptfoo results (``promptfoo eval -o results.json``, ``version`` 3) as per-question rows.

A results file holds one result per (test, prompt, provider).  Each (prompt, provider) pair is
one system, so it becomes one saved run; its rows are its tests:

==================  ====================================================================
row field           from each result of ``results.results``
==================  ====================================================================
``id``              the test's ``vars.id`` or ``vars.question_id``, else ``test<testIdx+1>``
                    (``testIdx`` pairs a test across providers and across files)
``question``        ``vars.question``, ``vars.query`` or ``vars.input``, else ``prompt.raw``
``reference_answer``  ``vars.target``, ``reference``, ``expected`` or ``expected_output``
``answer``          ``response.output`` (JSON text when it is not a string)
``metrics``         ``pass`` (``success`` 1/0), ``score``, every named score
                    (``namedScores``), each assertion's pass as its ``metric`` or ``type``
                    (``type#2`` for a second of the same type), and ``answered``
``latency_ms``      ``latencyMs``
``usage``           ``response.tokenUsage`` (else the result's ``tokenUsage``) prompt and
                    completion tokens, ``cost`` in dollars
``tags``            ``[testCase.metadata[--cluster-by]]``
``generation_error``  ``error`` when ``failureReason`` is 2 (the provider failed; a failed
                    assertion fills ``error`` too, with ``failureReason`` 1)
==================  ====================================================================

A test run several times (``promptfoo eval --repeat N``: promptfoo writes each run as a result
of its own, the same ``testCase`` at consecutive ``testIdx``, with no seed) is one row whose
``repeats`` hold its runs after the first (``docs/saved-run-format.md``, repeated runs).

Numbers are numbers: a latency, token count or cost given as text or a boolean, or below 0, is
refused with the file and the result's place (``results.results[4].latencyMs``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from itertools import pairwise
from pathlib import Path
from typing import Any

from ragaudit.data.formats import shorten
from ragaudit.data.saved_run.repeated import QUESTION_KEYS, with_repeats
from ragaudit.data.scored_rows import ScoredSystem, answered_metric
from ragaudit.exceptions import FormatError

__all__ = ["read_promptfoo"]


#: promptfoo's ``ResultFailureReason``: 0 none, 1 an assertion failed, 2 the provider failed
_PROVIDER_ERROR = 2
_REFERENCE_KEYS = ("target", "reference", "expected", "expected_output")


def _number(value: Any, path: str, field: str, *, at_least: float | None = None) -> float | None:
    """A finite number (no boolean, no text), ``None`` when absent."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        if at_least is not None and value < at_least:
            raise FormatError(f"expected a number >= {at_least:g}, found {value!r}", path=path,
                              field=field)  # fmt: skip
        return float(value)
    bound = "" if at_least is None else f" >= {at_least:g}"
    raise FormatError(f"expected a number{bound}, found {shorten(value)}", path=path, field=field)


def _count(value: Any, path: str, field: str) -> int | None:
    """A token count: a whole number >= 0 (a saved run holds token counts as integers)."""
    number = _number(value, path, field, at_least=0)
    if number is None:
        return None
    if not number.is_integer():
        raise FormatError(f"expected a whole number of tokens, found {value!r}", path=path,
                          field=field)  # fmt: skip
    return int(number)


def _string_id(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    return str(value) if isinstance(value, (str, int)) and str(value) else None


def _mapping(value: Any, path: str, field: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise FormatError(f"expected an object, found {shorten(value)}", path=path, field=field)
    return value


def _assertions(result: Mapping[str, Any], path: str, where: str) -> dict[str, float | None]:
    metrics: dict[str, float | None] = {}
    named = _mapping(result.get("namedScores"), path, f"{where}.namedScores")
    for name, value in named.items():
        metrics[str(name)] = _number(value, path, f"{where}.namedScores.{name}")
    grading = _mapping(result.get("gradingResult"), path, f"{where}.gradingResult")
    components = grading.get("componentResults") or []
    if not isinstance(components, list):
        raise FormatError(f"expected a list, found {shorten(components)}", path=path,
                          field=f"{where}.gradingResult.componentResults")  # fmt: skip
    seen: dict[str, int] = {}
    for n, component in enumerate(components):
        field = f"{where}.gradingResult.componentResults[{n}]"
        component = _mapping(component, path, field)
        assertion = _mapping(component.get("assertion"), path, f"{field}.assertion")
        kind = str(assertion.get("metric") or assertion.get("type") or "assertion")
        seen[kind] = seen.get(kind, 0) + 1
        name = kind if seen[kind] == 1 else f"{kind}#{seen[kind]}"
        passed = component.get("pass")
        if not isinstance(passed, bool):
            raise FormatError(f"expected true or false, found {shorten(passed)}", path=path,
                              field=f"{field}.pass")  # fmt: skip
        metrics.setdefault(name, float(passed))
    return metrics


def _row(result: Mapping[str, Any], i: int, path: str, cluster_by: str | None) -> dict[str, Any]:
    where = f"results.results[{i}]"
    test = _mapping(result.get("testCase"), path, f"{where}.testCase")
    variables = _mapping(result.get("vars", test.get("vars")), path, f"{where}.vars")
    test_index = result.get("testIdx")
    if not isinstance(test_index, int) or isinstance(test_index, bool) or test_index < 0:
        raise FormatError(f"expected a test index >= 0, found {shorten(test_index)}", path=path,
                          field=f"{where}.testIdx")  # fmt: skip
    qid = _string_id(variables.get("id")) or _string_id(variables.get("question_id"))
    prompt = _mapping(result.get("prompt"), path, f"{where}.prompt")
    question = next(
        (variables[k] for k in ("question", "query", "input") if isinstance(variables.get(k), str)),
        prompt.get("raw", ""),
    )
    response = _mapping(result.get("response"), path, f"{where}.response")
    output = response.get("output")
    answer = output if isinstance(output, str) or output is None else json.dumps(output)
    success = result.get("success")
    if not isinstance(success, bool):
        raise FormatError(f"expected true or false, found {shorten(success)}", path=path,
                          field=f"{where}.success")  # fmt: skip
    # an assertion that failed also fills `error` (with its reason): only failureReason 2 (or,
    # in files without it, an error with no grading) is the provider failing
    error = result.get("error")
    if error is not None and not isinstance(error, str):
        raise FormatError(f"expected an error message, found {shorten(error)}", path=path,
                          field=f"{where}.error")  # fmt: skip
    reason = result.get("failureReason")
    if reason is not None and reason not in (0, 1, 2):
        raise FormatError(f"expected 0, 1 or 2, found {shorten(reason)}", path=path,
                          field=f"{where}.failureReason")  # fmt: skip
    failed = bool(error) and (reason == _PROVIDER_ERROR or
                              (reason is None and not result.get("gradingResult")))  # fmt: skip
    metrics: dict[str, float | None] = {
        "pass": float(success),
        "score": _number(result.get("score"), path, f"{where}.score"),
        **_assertions(result, path, where),
    }
    metrics["answered"] = answered_metric(None if failed else answer, error if failed else None)
    latency = _number(result.get("latencyMs"), path, f"{where}.latencyMs", at_least=0)
    tokens = response.get("tokenUsage")
    field = f"{where}.response.tokenUsage"
    if tokens is None:
        tokens, field = result.get("tokenUsage"), f"{where}.tokenUsage"
    tokens = _mapping(tokens, path, field)
    cost = _number(result.get("cost", response.get("cost")), path, f"{where}.cost", at_least=0)
    tags: list[str] = []
    if cluster_by is not None:
        metadata = _mapping(test.get("metadata"), path, f"{where}.testCase.metadata")
        if cluster_by not in metadata:
            raise FormatError(
                f"--cluster-by {cluster_by}: this test has no such metadata key; found "
                f"{', '.join(map(str, metadata)) or 'no metadata'}",
                path=path, field=f"{where}.testCase.metadata",
            )  # fmt: skip
        tags = [str(metadata[cluster_by])]
    reference = next((variables[k] for k in _REFERENCE_KEYS if isinstance(variables.get(k), str)),
                     None)  # fmt: skip
    return {
        "id": qid or f"test{test_index + 1}",
        "question": question if isinstance(question, str) else "",
        "answerable": True,
        "reference_answer": reference,
        "keywords": [], "gold_docs": [], "tags": tags, "retrieved": [], "context_ids": [],
        "answer": None if failed else answer,
        "abstained": None, "citations": [], "judges": {},
        "latency_ms": None if latency is None else {"total": latency},
        "generation_error": error if failed else None,
        "usage": {
            "input_tokens": _count(tokens.get("prompt"), path, f"{field}.prompt"),
            "output_tokens": _count(tokens.get("completion"), path, f"{field}.completion"),
            "cost_usd": cost,
        },
        "metrics": metrics,
        "_order": test_index,
        "_where": i,
        "_named": qid is not None,
        "_test": json.dumps(test or {"vars": variables}, sort_keys=True, default=str),
    }  # fmt: skip


def _with_repeats(
    results: list[dict[str, Any]],
    path: str,
    provider_id: str,
    prompt_index: int,
    n_tests: int | None,
) -> list[dict[str, Any]]:
    """One system's rows, a test run several times (``promptfoo eval --repeat R`` writes
    each run as a result of its own, test t's runs at ``testIdx`` t*R .. t*R + R-1) as one
    row whose ``repeats`` hold its runs after the first, in ``testIdx`` order.

    R is read from the file's structure, never from the tests' content (two tests may be
    identical): the ``testIdx`` slots of this prompt and provider over ``len(config.tests)``
    (``n_tests``), each block of R consecutive slots one test, whose results must all be the
    same test.  Without a list of tests in the config, R is 1 and two identical tests at
    consecutive slots are refused (repeats cannot be told from copies).  A test without
    ``vars.id`` is then ``test<n>`` by its position among the tests, as in a file without
    repeats; a test id given to two different tests is refused."""
    results.sort(key=lambda r: r["_order"])
    for result, after in pairwise(results):
        if result["_order"] == after["_order"]:  # a result written twice, not a repeat
            raise FormatError(
                f"test id {after['id']!r} appears twice for provider {provider_id!r}, prompt "
                f"{prompt_index} (testIdx {after['_order']} twice)",
                path=path, field="results.results",
            )  # fmt: skip
    slots = results[-1]["_order"] + 1
    repeats = max(1, -(-slots // n_tests)) if n_tests else 1
    groups: dict[int, list[dict[str, Any]]] = {}
    for result in results:
        groups.setdefault(result["_order"] // repeats, []).append(result)
    for group in groups.values():
        for result in group[1:]:
            if result["_test"] == group[0]["_test"]:
                continue
            raise FormatError(
                f"expected the same test as testIdx {group[0]['_order']} (promptfoo eval "
                f"--repeat {repeats}: {slots} results over {n_tests} tests in config.tests), "
                f"found another at testIdx {result['_order']}",
                path=path, field=f"results.results[{result['_where']}].testCase",
            )  # fmt: skip
    if not n_tests:
        for result, after in pairwise(results):
            if after["_order"] == result["_order"] + 1 and after["_test"] == result["_test"]:
                raise FormatError(
                    f"the same test as testIdx {result['_order']}, and config.tests does not "
                    "list the tests: a repeat (promptfoo eval --repeat) cannot be told from a "
                    "copy of the test; write the results with the config's tests inline",
                    path=path, field=f"results.results[{after['_where']}].testCase",
                )  # fmt: skip
    rows, seen = [], set()
    for position, group in enumerate(groups.values()):
        first, *others = [{k: v for k, v in r.items() if not k.startswith("_")} for r in group]
        if repeats > 1 and not group[0]["_named"]:
            first["id"] = f"test{position + 1}"
        if first["id"] in seen:
            raise FormatError(
                f"test id {first['id']!r} appears twice for provider {provider_id!r}, prompt "
                f"{prompt_index} (give each test a distinct vars.id)",
                path=path, field="results.results",
            )  # fmt: skip
        seen.add(first["id"])
        # repeat r is the result at testIdx t*R + r: a run the file lacks stays in its place
        # as a generation error, never dropped and never shifting the later runs down
        by_slot = dict(zip((r["_order"] % repeats for r in group), [first, *others], strict=True))
        runs: list[dict[str, Any]] = [
            by_slot.get(r) or {"answer": None, "generation_error": f"repeat {r}: not in the file",
                               "metrics": {}}
            for r in range(repeats)
        ]  # fmt: skip
        if 0 not in by_slot:  # the question's fields from its first run in the file
            runs[0] = {**{k: v for k, v in first.items() if k in QUESTION_KEYS},
                       "retrieved": [], "context_ids": [], **runs[0]}  # fmt: skip
        rows.append(with_repeats(runs[0], [(None, g) for g in runs[1:]]))
    return rows


def read_promptfoo(
    path: str | Path, *, cluster_by: str | None = None
) -> tuple[str | None, list[ScoredSystem]]:
    """``(promptfoo version, one ScoredSystem per (prompt, provider))`` of a results file.

    Raises
    ------
    FormatError
        ``FILE:LINE: ...`` for a file that is not JSON (a truncated file), ``FILE: FIELD: ...``
        for a results version other than 3 or a malformed result.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "results.json"
    >>> result = {"testIdx": 0, "promptIdx": 0, "provider": {"id": "echo"},
    ...           "vars": {"question": "2+2?"}, "response": {"output": "4"},
    ...           "success": True, "score": 1, "latencyMs": 3}
    >>> _ = file.write_text(json.dumps({"results": {"version": 3, "results": [result]}}))
    >>> _, [system] = read_promptfoo(file)
    >>> system.label, system.rows[0]["id"], system.rows[0]["metrics"]
    ('echo', 'test1', {'pass': 1.0, 'score': 1.0, 'answered': 1.0})
    """
    name = str(path)
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise FormatError(
            f"expected promptfoo results JSON, {exc.msg} at column {exc.colno} (a truncated "
            "file?)",
            path=name, line=exc.lineno,
        ) from None  # fmt: skip
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"cannot read: {exc}", path=name) from None
    block = document.get("results") if isinstance(document, Mapping) else None
    if not isinstance(block, Mapping) or not isinstance(block.get("results"), list):
        raise FormatError(
            "expected promptfoo results (`promptfoo eval -o FILE.json`): an object with "
            f"results.results, found {shorten(document)}",
            path=name, field="results",
        )  # fmt: skip
    if block.get("version") != 3:
        raise FormatError(
            f"expected results version 3 (the current promptfoo layout), found "
            f"{shorten(block.get('version'))}",
            path=name, field="results.version",
        )  # fmt: skip
    systems: dict[tuple[int, str], list[dict[str, Any]]] = {}
    labels: dict[tuple[int, str], str] = {}
    for i, result in enumerate(block["results"]):
        if not isinstance(result, Mapping):
            raise FormatError(f"expected a result object, found {shorten(result)}", path=name,
                              field=f"results.results[{i}]")  # fmt: skip
        provider = result.get("provider") or {}
        provider_id = provider.get("label") or provider.get("id") if isinstance(
            provider, Mapping) else provider  # fmt: skip
        if not isinstance(provider_id, str) or not provider_id:
            raise FormatError(f"expected a provider id, found {shorten(provider)}", path=name,
                              field=f"results.results[{i}].provider")  # fmt: skip
        prompt_index = result.get("promptIdx", 0)
        if not isinstance(prompt_index, int) or isinstance(prompt_index, bool):
            raise FormatError(f"expected a prompt index, found {shorten(prompt_index)}",
                              path=name, field=f"results.results[{i}].promptIdx")  # fmt: skip
        key = (prompt_index, provider_id)
        systems.setdefault(key, []).append(_row(result, i, name, cluster_by))
        prompt = result.get("prompt") if isinstance(result.get("prompt"), Mapping) else {}
        label = (prompt or {}).get("label")
        labels[key] = label if isinstance(label, str) and label else f"prompt {prompt_index}"
    if not systems:
        raise FormatError("expected results, found none", path=name, field="results.results")
    several_prompts = len({p for p, _ in systems}) > 1
    several_providers = len({q for _, q in systems}) > 1
    meta = document.get("metadata") if isinstance(document.get("metadata"), Mapping) else {}
    out = []
    config = document.get("config")
    tests = config.get("tests") if isinstance(config, Mapping) else None
    n_tests = len(tests) if isinstance(tests, list) and tests else None
    for (prompt_index, provider_id), results in sorted(systems.items()):
        rows = _with_repeats(results, name, provider_id, prompt_index, n_tests)
        names = list(dict.fromkeys(m for r in results for m in r["metrics"]))
        for r in rows:
            r["metrics"] = {m: r["metrics"].get(m) for m in names}
            for entry in r.get("repeats", ()):
                entry["metrics"] = {m: entry["metrics"].get(m) for m in names}
        prompt = labels[(prompt_index, provider_id)]
        parts = [provider_id] * several_providers + [prompt] * several_prompts
        label = ", ".join(parts) or provider_id
        slug = ".".join(parts) or provider_id
        details = {"eval_id": document.get("evalId"), "provider": provider_id,
                   "prompt_index": prompt_index, "prompt": prompt}  # fmt: skip
        out.append(ScoredSystem(label, slug, rows, tuple(names), details))
    version = (meta or {}).get("promptfooVersion")
    return (version if isinstance(version, str) else None), out
