"""OpenTelemetry spans from a file: OTLP/JSON (one document, or one per line) or span JSON lines.

Two layouts are read, told apart line by line:

* **OTLP/JSON**, the OpenTelemetry protocol's JSON encoding: an ``ExportTraceServiceRequest``
  ``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}`` per line, as the SDK's file
  exporter (``opentelemetry-exporter-otlp-json-file``) and the Collector's file exporter write
  it, or one such document over many lines.  Ids are hex, times are integer nanoseconds
  (``startTimeUnixNano``, a string in JSON), attributes are ``{"key", "value": {"stringValue"
  | "intValue" | "doubleValue" | "boolValue" | "arrayValue"}}``.
* **Span JSON lines**, one ``ReadableSpan.to_json(indent=None)`` per line (the SDK's console
  exporter format): ``context.trace_id``, ``parent_id``, ISO 8601 ``start_time``/``end_time``
  (microseconds: the SDK rounds nanoseconds there) and a flat ``attributes`` object.

A span is refused, with ``FILE:LINE: FIELD``, when it lacks an id or a time, when its end is
before its start, or when an attribute value is not one of the OTLP value types.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaudit.data.formats import shorten
from ragaudit.exceptions import FormatError

__all__ = ["Span", "read_spans"]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


@dataclass(frozen=True)
class Span:
    """One finished span.

    Attributes
    ----------
    line : int
        The file line it was read from (the line its document starts on).
    where : str
        Its place within that line's document (``resourceSpans[0].scopeSpans[0].spans[3]``),
        or ``""`` for a span JSON line.
    trace_id, span_id : str
        Lower-case hex.
    parent_id : str or None
    name : str
    start_ns, end_ns : int
        Unix time in nanoseconds.
    attributes : dict
        Flat, as recorded (OpenInference flattens lists: ``retrieval.documents.0.document.id``).
    """

    line: int
    where: str
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]

    @property
    def duration_ms(self) -> float:
        """``(end_ns - start_ns) / 1e6``."""
        return (self.end_ns - self.start_ns) / 1e6


def _otlp_value(value: Any, path: str, line: int, field: str) -> Any:
    if not isinstance(value, Mapping) or len(value) != 1:
        raise FormatError(
            f"expected an OTLP AnyValue (one of stringValue, intValue, doubleValue, boolValue, "
            f"arrayValue), found {shorten(value)}",
            path=path,
            line=line,
            field=field,
        )
    kind, inner = next(iter(value.items()))
    if kind == "stringValue" and isinstance(inner, str):
        return inner
    if kind == "boolValue" and isinstance(inner, bool):
        return inner
    if kind == "intValue" and isinstance(inner, (str, int)) and not isinstance(inner, bool):
        try:
            return int(inner)  # int64 is a string in OTLP/JSON
        except ValueError:
            pass
    if kind == "doubleValue" and isinstance(inner, (int, float)) and not isinstance(inner, bool):
        return float(inner)
    if kind == "arrayValue" and isinstance(inner, Mapping):
        items = inner.get("values", [])
        if isinstance(items, list):
            return [_otlp_value(v, path, line, f"{field}[{i}]") for i, v in enumerate(items)]
    raise FormatError(
        f"expected an OTLP AnyValue, found {kind}: {shorten(inner)}",
        path=path,
        line=line,
        field=field,
    )


def _nanos(value: Any, path: str, line: int, field: str) -> int:
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise FormatError(
        f"expected a time in nanoseconds (a string of digits), found {shorten(value)}",
        path=path,
        line=line,
        field=field,
    )


def _hex(value: Any, path: str, line: int, field: str, *, optional: bool = False) -> str | None:
    if optional and value in (None, "", "0x0", "0000000000000000"):
        return None
    if isinstance(value, str):
        text = value[2:] if value.startswith("0x") else value
        if text and all(c in "0123456789abcdefABCDEF" for c in text):
            return text.lower()
    raise FormatError(
        f"expected a hex id, found {shorten(value)}", path=path, line=line, field=field
    )


def _require(record: Mapping[str, Any], key: str, path: str, line: int, where: str) -> Any:
    if key not in record:
        raise FormatError(
            f"missing; found keys {', '.join(map(str, record)) or 'none'}",
            path=path,
            line=line,
            field=f"{where}.{key}" if where else key,
        )
    return record[key]


def _otlp_spans(document: Mapping[str, Any], path: str, line: int) -> Iterator[Span]:
    resources = document["resourceSpans"]
    if not isinstance(resources, list):
        raise FormatError("expected a list", path=path, line=line, field="resourceSpans")
    for r, resource in enumerate(resources):
        here = f"resourceSpans[{r}]"
        scopes = resource.get("scopeSpans", []) if isinstance(resource, Mapping) else None
        if not isinstance(scopes, list):
            raise FormatError("expected a list", path=path, line=line, field=f"{here}.scopeSpans")
        for s, scope in enumerate(scopes):
            spans = scope.get("spans", []) if isinstance(scope, Mapping) else None
            if not isinstance(spans, list):
                raise FormatError(
                    "expected a list", path=path, line=line, field=f"{here}.scopeSpans[{s}].spans"
                )
            for i, span in enumerate(spans):
                where = f"{here}.scopeSpans[{s}].spans[{i}]"
                if not isinstance(span, Mapping):
                    raise FormatError("expected a span object", path=path, line=line, field=where)
                attributes: dict[str, Any] = {}
                raw = span.get("attributes", [])
                if not isinstance(raw, list):
                    raise FormatError(
                        "expected a list", path=path, line=line, field=f"{where}.attributes"
                    )
                for a, attribute in enumerate(raw):
                    field = f"{where}.attributes[{a}]"
                    if not isinstance(attribute, Mapping) or not isinstance(
                        attribute.get("key"), str
                    ):
                        raise FormatError(
                            f"expected {{key, value}}, found {shorten(attribute)}",
                            path=path,
                            line=line,
                            field=field,
                        )
                    attributes[attribute["key"]] = _otlp_value(
                        attribute.get("value"), path, line, f"{field}.value"
                    )
                yield _span(
                    path,
                    line,
                    where,
                    _require(span, "traceId", path, line, where),
                    _require(span, "spanId", path, line, where),
                    span.get("parentSpanId"),
                    span.get("name", ""),
                    _nanos(
                        _require(span, "startTimeUnixNano", path, line, where),
                        path,
                        line,
                        f"{where}.startTimeUnixNano",
                    ),
                    _nanos(
                        _require(span, "endTimeUnixNano", path, line, where),
                        path,
                        line,
                        f"{where}.endTimeUnixNano",
                    ),
                    attributes,
                    ("traceId", "spanId", "parentSpanId", "endTimeUnixNano"),
                )


def _iso_nanos(value: Any, path: str, line: int, field: str) -> int:
    try:
        if not isinstance(value, str):
            raise ValueError
        moment = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            raise ValueError
    except ValueError:
        raise FormatError(
            f"expected an ISO 8601 time with a zone, found {shorten(value)}",
            path=path,
            line=line,
            field=field,
        ) from None
    delta = moment - _EPOCH  # integer arithmetic: no float rounding of the time
    return ((delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds) * 1000


def _sdk_span(record: Mapping[str, Any], path: str, line: int) -> Span:
    context = _require(record, "context", path, line, "")
    if not isinstance(context, Mapping):
        raise FormatError(
            f"expected an object, found {shorten(context)}", path=path, line=line, field="context"
        )
    attributes = record.get("attributes") or {}
    if not isinstance(attributes, Mapping):
        raise FormatError(
            f"expected an object, found {shorten(attributes)}",
            path=path,
            line=line,
            field="attributes",
        )
    for key, value in attributes.items():
        values = value if isinstance(value, list) else [value]
        if not all(isinstance(v, (str, int, float, bool)) for v in values):
            raise FormatError(
                f"expected a string, number, boolean or a list of them, found {shorten(value)}",
                path=path,
                line=line,
                field=f"attributes.{key}",
            )
    return _span(
        path,
        line,
        "",
        _require(context, "trace_id", path, line, "context"),
        _require(context, "span_id", path, line, "context"),
        record.get("parent_id"),
        record.get("name", ""),
        _iso_nanos(_require(record, "start_time", path, line, ""), path, line, "start_time"),
        _iso_nanos(_require(record, "end_time", path, line, ""), path, line, "end_time"),
        dict(attributes),
        ("context.trace_id", "context.span_id", "parent_id", "end_time"),
    )


def _span(
    path: str,
    line: int,
    where: str,
    trace_id: Any,
    span_id: Any,
    parent_id: Any,
    name: Any,
    start_ns: int,
    end_ns: int,
    attributes: dict[str, Any],
    fields: tuple[str, str, str, str],
) -> Span:
    prefix = f"{where}." if where else ""
    trace = _hex(trace_id, path, line, prefix + fields[0])
    span = _hex(span_id, path, line, prefix + fields[1])
    parent = _hex(parent_id, path, line, prefix + fields[2], optional=True)
    if not isinstance(name, str):
        raise FormatError(
            f"expected a string, found {shorten(name)}", path=path, line=line, field=prefix + "name"
        )
    if end_ns < start_ns:
        raise FormatError(
            f"the span ends {(start_ns - end_ns) / 1e6:g} ms before it starts",
            path=path,
            line=line,
            field=prefix + fields[3],
        )
    return Span(line, where, str(trace), str(span), parent, name, start_ns, end_ns, attributes)


def read_spans(path: str | Path) -> list[Span]:
    """Every span of an OTLP/JSON or span-JSON-lines file, in file order.

    Raises
    ------
    FormatError
        ``FILE:LINE: FIELD: ...`` for a line that is not JSON (a truncated file), a span
        missing an id or a time, an end before the start, or an attribute that is not an
        OTLP value.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "spans.jsonl"
    >>> span = {"traceId": "ab", "spanId": "01", "name": "rag", "startTimeUnixNano": "1000",
    ...         "endTimeUnixNano": "3500000",
    ...         "attributes": [{"key": "input.value", "value": {"stringValue": "Leave?"}}]}
    >>> doc = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    >>> _ = file.write_text(json.dumps(doc) + "\\n")
    >>> [(s.name, s.duration_ms, s.attributes) for s in read_spans(file)]
    [('rag', 3.499, {'input.value': 'Leave?'})]
    """
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"cannot read: {exc}", path=name) from None
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        raise FormatError("expected spans, found an empty file", path=name)
    documents: list[tuple[int, Any]] = []
    try:
        documents.append((first + 1, json.loads(lines[first])))
        one_per_line = True
    except json.JSONDecodeError:
        one_per_line = False
    if one_per_line:
        for number, text_line in enumerate(lines[first + 1 :], start=first + 2):
            if not text_line.strip():
                continue
            try:
                documents.append((number, json.loads(text_line)))
            except json.JSONDecodeError as exc:
                raise FormatError(
                    f"expected one JSON document per line (OTLP/JSON or a span), {exc.msg} at "
                    f"column {exc.colno} (a truncated file?)",
                    path=name,
                    line=number,
                ) from None
    else:
        try:
            documents = [(first + 1, json.loads(text))]
        except json.JSONDecodeError as exc:
            raise FormatError(
                f"expected OTLP/JSON or one span per line, {exc.msg} (a truncated file?)",
                path=name,
                line=exc.lineno,
            ) from None
    spans: list[Span] = []
    for line, document in documents:
        if isinstance(document, Mapping) and "resourceSpans" in document:
            spans.extend(_otlp_spans(document, name, line))
        elif isinstance(document, Mapping) and "context" in document:
            spans.append(_sdk_span(document, name, line))
        else:
            raise FormatError(
                f"expected an OTLP/JSON document (resourceSpans) or a span (context, "
                f"start_time, ...), found {shorten(document)}",
                path=name,
                line=line,
            )
    if not spans:
        raise FormatError("expected spans, found none", path=name)
    return spans
