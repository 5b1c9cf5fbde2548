"""Retrievers: anything with ``retrieve(question, depth) -> [(chunk_id, score), ...]``.

* :class:`BM25Retriever` (default, core dependency ``bm25s``): Lucene BM25 (k1=1.5, b=0.75)
  over the analyser in :mod:`ragaudit._text` (lower case, small stopword list, light
  suffix stemming).  Chunks sharing no term with the question are not returned.  Ties are
  broken by corpus order, so results are identical on every run.
* :class:`DenseRetriever`: cosine similarity over normalised embeddings, from a
  sentence-transformers model loaded from a path or name you give (extra ``dense``) or from
  any ``encoder`` you pass (an object with ``encode(texts)`` or a function ``texts -> array``).
* :class:`QdrantRetriever` (extra ``qdrant``; a model path also needs ``dense``): the same
  embeddings stored in Qdrant, in-process memory mode by default or a server URL.
* :class:`CallableRetriever`: bring your own function ``question -> [(chunk_id, score)]``.
* :class:`PrecomputedRetriever`: a TREC or JSONL run file produced elsewhere.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ragaudit._io import require
from ragaudit._text import content_tokens
from ragaudit._validate import check_int, name_some
from ragaudit.data.chunks import Chunk
from ragaudit.data.formats import read_ranked
from ragaudit.exceptions import InputError, RagauditWarning

__all__ = [
    "BM25Retriever",
    "CallableRetriever",
    "DenseRetriever",
    "Encoder",
    "PrecomputedRetriever",
    "QdrantRetriever",
    "Retriever",
    "read_run_file",
]


@runtime_checkable
class Retriever(Protocol):
    """What the harness needs from a retriever."""

    def retrieve(self, question: str, depth: int) -> list[tuple[str, float]]:
        """The top ``depth`` chunks for ``question`` as ``(chunk_id, score)``, best first."""
        ...


def _check_depth(depth: int) -> None:
    check_int(depth, "depth")


def _top(chunk_ids: Sequence[str], scores: np.ndarray, depth: int) -> list[tuple[str, float]]:
    """Best ``depth`` positive scores, ties broken by corpus order (a stable sort)."""
    order = np.argsort(-scores, kind="stable")[:depth]
    return [(chunk_ids[i], round(float(scores[i]), 6)) for i in order if scores[i] > 0]


class BM25Retriever:
    """BM25 over chunks with ragaudit's analyser.

    .. math:: s(q, c) = \\sum_{t \\in q} \\mathrm{idf}(t)\\,
              \\frac{f_{t,c}}{f_{t,c} + k_1 (1 - b + b\\,|c| / \\overline{|c|})}

    (bm25s's ``lucene`` variant: no ``k1 + 1`` factor, which does not change the
    ranking) with ``idf(t) = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))``, ``k1 = 1.5``, ``b = 0.75``.

    Examples
    --------
    >>> chunks = [Chunk("c1", "A", 0, "Laptops are replaced every three years."),
    ...           Chunk("c2", "B", 0, "Holiday requests go to your manager."),
    ...           Chunk("c3", "B", 1, "The canteen opens at noon.")]
    >>> [cid for cid, _ in BM25Retriever(chunks).retrieve("When is my laptop replaced?", 5)]
    ['c1']
    """

    def __init__(self, chunks: Sequence[Chunk], *, k1: float = 1.5, b: float = 0.75) -> None:
        if not chunks:
            raise InputError("BM25Retriever: expected at least one chunk, found none")
        import bm25s  # a core dependency, imported here so `ragaudit --help` stays fast

        self.chunk_ids = [c.chunk_id for c in chunks]
        # numpy backend: identical scores everywhere, and no JIT compilation when numba is around
        self._index = bm25s.BM25(k1=k1, b=b, method="lucene", backend="numpy")
        corpus_tokens = [content_tokens(c.text) or [""] for c in chunks]
        self._index.index(corpus_tokens, show_progress=False)

    def retrieve(self, question: str, depth: int) -> list[tuple[str, float]]:
        """Top ``depth`` chunks by BM25 score (see the class docstring)."""
        _check_depth(depth)
        tokens = content_tokens(question)
        if not tokens:
            return []
        scores = np.asarray(self._index.get_scores(tokens), dtype=np.float64)
        return _top(self.chunk_ids, scores, depth)


class Encoder(Protocol):
    """Anything that turns texts into vectors: ``encode(texts) -> array (len(texts), dim)``."""

    def encode(self, texts: list[str]) -> Any:
        """One row per text; any array-like of numbers."""
        ...


EncoderLike = Encoder | Callable[[list[str]], Any]


def _encode_function(encoder: EncoderLike) -> Callable[[list[str]], Any]:
    """The ``encode`` method of ``encoder``, or ``encoder`` itself when it is a plain callable."""
    method = getattr(encoder, "encode", None)
    if callable(method):
        return method
    if callable(encoder):
        return encoder
    raise InputError(
        "DenseRetriever: encoder: expected an object with encode(texts) or a callable, "
        f"found {type(encoder).__name__}"
    )


def _unit_rows(vectors: Any, count: int, source: str) -> np.ndarray:
    """Check an encoder's output is ``(count, dim)`` and finite; scale each row to length 1.

    An all-zero row stays zero (it then scores 0 against everything) instead of becoming NaN.
    """
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{source}: expected an array of numbers, found {vectors!r:.80}") from None
    if matrix.ndim != 2 or matrix.shape[0] != count or matrix.shape[1] < 1:
        raise InputError(
            f"{source}: expected an array of shape ({count}, dim), found shape {matrix.shape}"
        )
    if not np.all(np.isfinite(matrix)):
        raise InputError(f"{source}: expected finite numbers, found NaN or infinity")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms > 0, norms, 1.0)).astype(np.float32)


class DenseRetriever:
    """Cosine similarity over embeddings (extra ``dense`` for sentence-transformers models).

    .. math:: s(q, c) = \\frac{\\langle e(q), e(c) \\rangle}{\\lVert e(q) \\rVert\\,
              \\lVert e(c) \\rVert}

    All chunks are returned up to ``depth``, best first; equal scores keep corpus order.

    Parameters
    ----------
    chunks : sequence of Chunk
    model : str, optional
        A local model directory or a model name sentence-transformers can load.  ragaudit
        never picks or downloads a model for you.
    encoder : object with ``encode(texts)``, or a callable ``texts -> array``, optional
        Used instead of a sentence-transformers model: it receives a list of strings and
        returns one vector per string, shape ``(len(texts), dim)``.  Rows are L2-normalised
        here, so the encoder need not do it.  Give exactly one of ``model`` and ``encoder``.
    batch_size : int, default 32
        Batch size for the sentence-transformers model (not used with ``encoder``).

    Examples
    --------
    >>> import numpy as np
    >>> def letters(texts):  # a toy encoder: counts of the letters a, b, c
    ...     return np.array([[t.count(ch) for ch in "abc"] for t in texts], dtype=float)
    >>> chunks = [Chunk("c1", "A", 0, "aaa"), Chunk("c2", "A", 1, "abc"),
    ...           Chunk("c3", "B", 0, "ccc")]
    >>> DenseRetriever(chunks, encoder=letters).retrieve("aab", 2)
    [('c1', 0.894427), ('c2', 0.774597)]
    """

    def __init__(
        self,
        chunks: Sequence[Chunk],
        model: str | None = None,
        *,
        encoder: EncoderLike | None = None,
        batch_size: int = 32,
    ) -> None:
        if (model is None) == (encoder is None):
            raise InputError(
                "DenseRetriever: expected exactly one of model (a sentence-transformers path) "
                "and encoder, found " + ("both" if model is not None else "neither")
            )
        if not chunks:
            raise InputError("DenseRetriever: expected at least one chunk, found none")
        self.chunk_ids = [c.chunk_id for c in chunks]
        self._batch_size = batch_size
        self._encode = (
            self._load_sentence_transformer(model) if encoder is None else _encode_function(encoder)
        )
        texts = [c.text for c in chunks]
        self._matrix = _unit_rows(self._encode(texts), len(texts), "encoder output for the chunks")

    def _load_sentence_transformer(self, model: str | None) -> Callable[[list[str]], Any]:
        st = require("sentence_transformers", extra="dense", feature="the dense retriever")
        loaded = st.SentenceTransformer(model)

        def encode(texts: list[str]) -> Any:
            return loaded.encode(
                texts,
                batch_size=self._batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )

        return encode

    @property
    def dimension(self) -> int:
        """Length of the embedding vectors."""
        return int(self._matrix.shape[1])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-normalised float32 embeddings, shape ``(len(texts), dim)``."""
        batch = list(texts)
        rows = _unit_rows(self._encode(batch), len(batch), "encoder output")
        if rows.shape[1] != self.dimension:
            raise InputError(
                f"encoder output: expected vectors of length {self.dimension} (as for the "
                f"chunks), found {rows.shape[1]}"
            )
        return rows

    def retrieve(self, question: str, depth: int) -> list[tuple[str, float]]:
        """Top ``depth`` chunks by cosine similarity ``<e(q), e(c)>`` of unit vectors."""
        _check_depth(depth)
        query = self.embed([question])[0]
        scores = (self._matrix @ query).astype(np.float64)
        order = np.argsort(-scores, kind="stable")[:depth]
        return [(self.chunk_ids[i], round(float(scores[i]), 6)) for i in order]


class QdrantRetriever:
    """Dense retrieval through a Qdrant collection (extra ``qdrant``; models need ``dense``).

    Qdrant's cosine distance gives the same scores as :class:`DenseRetriever`; the order of
    exactly equal scores is Qdrant's.

    Parameters
    ----------
    chunks : sequence of Chunk
    model : str, optional
        The sentence-transformers model used to embed chunks and questions.
    encoder : object with ``encode(texts)``, or a callable ``texts -> array``, optional
        Used instead of ``model`` (see :class:`DenseRetriever`).
    url : str, optional
        A Qdrant server; by default an in-process, in-memory instance (nothing persists).
    collection : str, default "ragaudit"
        Collection name; it is re-created, so do not point this at a collection you need.
    """

    def __init__(
        self,
        chunks: Sequence[Chunk],
        model: str | None = None,
        *,
        encoder: EncoderLike | None = None,
        url: str | None = None,
        collection: str = "ragaudit",
    ) -> None:
        qdrant = require("qdrant_client", extra="qdrant", feature="the Qdrant retriever")
        models = require("qdrant_client.models", extra="qdrant", feature="the Qdrant retriever")
        self._encoder = DenseRetriever(chunks, model, encoder=encoder)
        self._client = qdrant.QdrantClient(url=url) if url else qdrant.QdrantClient(":memory:")
        self._collection = collection
        if self._client.collection_exists(collection):
            self._client.delete_collection(collection)
        self._client.create_collection(
            collection,
            vectors_config=models.VectorParams(
                size=self._encoder.dimension, distance=models.Distance.COSINE
            ),
        )
        # Point ids are corpus positions: Qdrant only accepts integers or UUIDs, and chunk ids
        # supplied by a library user need not be UUIDs.  The chunk id travels in the payload.
        points = [
            models.PointStruct(id=position, vector=vec.tolist(), payload={"chunk_id": cid})
            for position, (cid, vec) in enumerate(
                zip(self._encoder.chunk_ids, self._encoder._matrix, strict=True)
            )
        ]
        self._client.upsert(collection, points=points, wait=True)

    def retrieve(self, question: str, depth: int) -> list[tuple[str, float]]:
        """Top ``depth`` chunks by Qdrant cosine similarity."""
        _check_depth(depth)
        query = self._encoder.embed([question])[0]
        response = self._client.query_points(
            self._collection, query=query.tolist(), limit=depth, with_payload=True
        )
        return [(str(p.payload["chunk_id"]), round(float(p.score), 6)) for p in response.points]


class CallableRetriever:
    """Wrap any function ``question -> ranked [(chunk_id, score)]`` as a retriever.

    The result is truncated to ``depth``; order is the function's.

    >>> r = CallableRetriever(lambda q: [("c2", 0.9), ("c1", 0.4), ("c3", 0.1)])
    >>> r.retrieve("anything", 2)
    [('c2', 0.9), ('c1', 0.4)]
    """

    def __init__(self, function: Callable[[str], Sequence[tuple[str, float]]]) -> None:
        self._function = function

    def retrieve(self, question: str, depth: int) -> list[tuple[str, float]]:
        """Call the function and keep its first ``depth`` results."""
        _check_depth(depth)
        results = list(self._function(question))
        cleaned: list[tuple[str, float]] = []
        for position, entry in enumerate(results[:depth]):
            try:
                cid, score = entry
                cleaned.append((str(cid), float(score)))
            except (TypeError, ValueError):
                raise InputError(
                    f"retriever result [{position}]: expected a (chunk_id, score) pair, "
                    f"found {entry!r}"
                ) from None
        return cleaned


def read_run_file(path: str | Path) -> dict[str, list[tuple[str, float]]]:
    """Read a precomputed run with the shared reader (TREC, or JSON/JSONL by content).

    Rankings come back best first, ranked exactly as ``ragaudit evaluate`` ranks the same file
    (score descending, ties broken by id descending as trec_eval does); see
    :func:`ragaudit.data.formats.read_ranked`.

    Raises
    ------
    FormatError
        Naming the file, line and field of the first bad line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> name = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
    >>> _ = name.write_text("q1 Q0 c7 1 2.5 bm25\\nq1 Q0 c3 2 3.0 bm25\\n")
    >>> read_run_file(name)
    {'q1': [('c3', 3.0), ('c7', 2.5)]}
    """
    return read_ranked(path)


class PrecomputedRetriever:
    """Serve rankings from a run computed elsewhere, looked up by question text.

    Parameters
    ----------
    rankings : mapping of question id to ranked ``[(id, score)]``
        Ids may be chunk ids of this chunking, or document ids; a document id is expanded into
        that document's chunks in chunk order, all with the document's score
        (:attr:`expansion_rule` states this for the run's output).
    question_ids : mapping of question text to question id
        How a question (the retriever protocol's input) is found in the run.
    chunks : sequence of Chunk
        The chunking in use (to check ids and expand documents).
    name : str, optional
        The run file, for messages.

    Examples
    --------
    >>> chunks = [Chunk("c1", "A", 0, "x"), Chunk("c2", "A", 1, "y"), Chunk("c3", "B", 0, "z")]
    >>> r = PrecomputedRetriever({"q1": [("B", 2.0), ("A", 1.0)]}, {"Why?": "q1"}, chunks)
    >>> r.retrieve("Why?", 3)
    [('c3', 2.0), ('c1', 1.0), ('c2', 1.0)]
    """

    def __init__(
        self,
        rankings: Mapping[str, Sequence[tuple[str, float]]],
        question_ids: Mapping[str, str],
        chunks: Sequence[Chunk],
        *,
        name: str | None = None,
    ) -> None:
        where = f"{name}: " if name else ""
        known_chunks = {c.chunk_id for c in chunks}
        doc_chunks: dict[str, list[str]] = {}
        for c in sorted(chunks, key=lambda c: (c.doc_id, c.index)):
            doc_chunks.setdefault(c.doc_id, []).append(c.chunk_id)
        self._rankings: dict[str, list[tuple[str, float]]] = {}
        self.n_chunk_ids = 0
        self.n_doc_ids = 0
        for qid, ranking in rankings.items():
            expanded: list[tuple[str, float]] = []
            seen: set[str] = set()
            for item, score in ranking:
                if item in known_chunks:
                    ids = [item]
                    self.n_chunk_ids += 1
                elif item in doc_chunks:
                    ids = doc_chunks[item]
                    self.n_doc_ids += 1
                else:
                    raise InputError(
                        f"{where}question {qid!r}: id {item!r} is neither a chunk id of this "
                        "chunking nor a document id of the corpus; the run must use the same "
                        "corpus and chunking (--chunk-size/--chunk-overlap/--chunker)"
                    )
                expanded.extend((cid, float(score)) for cid in ids if cid not in seen)
                seen.update(ids)
            self._rankings[str(qid)] = expanded
        self._question_ids = dict(question_ids)
        self._name = name
        # a question the run does not hold retrieves nothing and scores 0 on every retrieval
        # metric: say so, as evaluate does, rather than average it in silently
        absent = [qid for qid in self._question_ids.values() if qid not in self._rankings]
        if absent:
            warnings.warn(
                f"{where}{len(absent)} of {len(self._question_ids)} golden-set question(s) are "
                f"missing from the run: nothing is retrieved for them and they score 0: "
                f"{name_some(absent)}",
                RagauditWarning,
                stacklevel=2,
            )

    @property
    def expansion_rule(self) -> str | None:
        """How document ids of the run were turned into chunks (None for a chunk-level run).

        >>> chunks = [Chunk("c1", "A", 0, "x"), Chunk("c2", "A", 1, "y")]
        >>> rule = PrecomputedRetriever({"q1": [("A", 2.0)]}, {"Why?": "q1"}, chunks).expansion_rule
        >>> rule.split(":")[0]
        'document-level run (1 document ids, 0 chunk ids)'
        """
        if not self.n_doc_ids:
            return None
        kind = "document-level run" if not self.n_chunk_ids else "mixed run"
        return (
            f"{kind} ({self.n_doc_ids} document ids, {self.n_chunk_ids} chunk ids): each "
            "document id was expanded into all its chunks, in document order, each with the "
            "document's score; the top k are chunks, so document metrics count the documents "
            "of the top-k chunks (evaluate on the same file ranks documents, and can differ)"
        )

    def retrieve(self, question: str, depth: int) -> list[tuple[str, float]]:
        """The stored ranking of the question, first ``depth`` entries; [] if it has none."""
        _check_depth(depth)
        qid = self._question_ids.get(question)
        if qid is None:
            raise InputError(f"question {question[:60]!r} is not in the golden set")
        return self._rankings.get(qid, [])[:depth]
