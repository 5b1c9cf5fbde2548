"""``RunConfig``: everything that defines one run of the harness, validated once.

The harness (:func:`ragaudit.pipeline.harness.run_pipeline`) and its dry run
(:func:`ragaudit.pipeline.llm_stages.plan_llm_run`) take one frozen ``RunConfig`` instead of two
dozen keyword arguments; progress callbacks, which do not change the result, stay separate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragaudit._validate import check_int
from ragaudit.exceptions import InputError
from ragaudit.pipeline.chunking import CHUNKERS
from ragaudit.pipeline.generators import GENERATORS

if TYPE_CHECKING:
    from ragaudit.data.qrels import Qrels
    from ragaudit.llm.config import LLMConfig

__all__ = [
    "JUDGE_MODES",
    "RETRIEVERS",
    "SAVE_FORMATS",
    "RunConfig",
    "check_positive",
    "check_save_as",
    "default_name",
    "saved_run_path",
]

#: ``ragaudit run --retriever`` (a ``run_file`` replaces any of them).
RETRIEVERS: tuple[str, ...] = ("bm25", "dense", "qdrant")
#: ``ragaudit run --judges``: the offline judges alone, or the LLM judges on top of them.
JUDGE_MODES: tuple[str, ...] = ("offline", "llm")
#: ``--save-as``: the format a command writes its saved run in (the file's extension; JSON
#: for interchange and small runs, Parquet for large ones).
SAVE_FORMATS: tuple[str, ...] = ("json", "parquet")


def check_positive(name: str, value: Any) -> int:
    """``value`` if it is an integer >= 1, else :class:`InputError`.

    >>> check_positive("k", 3)
    3
    """
    return check_int(value, name)


def default_name(
    k: int,
    chunk_size: int,
    chunker: str = "fixed",
    retriever: str = "bm25",
    generator: str = "extractive",
) -> str:
    """The conventional configuration name, e.g. ``k3_cs800``.

    >>> default_name(3, 800), default_name(5, 400, "markdown", "dense", "openai")
    ('k3_cs800', 'k5_cs400_markdown_dense_openai')
    """
    parts = [f"k{k}", f"cs{chunk_size}"]
    parts += [
        p for p, d in ((chunker, "fixed"), (retriever, "bm25"), (generator, "extractive")) if p != d
    ]
    return "_".join(parts)


def saved_run_path(
    out_dir: str | Path, name: str, limit: int | None = None, save_as: str = "json"
) -> Path:
    """``<out>/<name>.json``, or ``<out>/<name>.limit<N>.json`` for a limited run; with
    ``save_as="parquet"`` the same name ending in ``.parquet`` (which
    :func:`~ragaudit.data.records.write_saved_run` writes as Parquet).

    >>> saved_run_path("res", "k3_cs800", 5).name
    'k3_cs800.limit5.json'
    >>> saved_run_path("res", "k3_cs800", save_as="parquet").name
    'k3_cs800.parquet'
    """
    check_run_name(name)
    check_save_as(save_as)
    suffix = "" if limit is None else f".limit{limit}"
    return Path(out_dir) / f"{name}{suffix}.{save_as}"


def check_save_as(save_as: str) -> str:
    """``save_as`` if it is one of :data:`SAVE_FORMATS`, else a one-line error.

    >>> check_save_as("parquet")
    'parquet'
    >>> check_save_as("csv")
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: save_as: expected one of json, parquet, found 'csv'
    """
    if save_as not in SAVE_FORMATS:
        raise InputError(f"save_as: expected one of {', '.join(SAVE_FORMATS)}, found {save_as!r}")
    return save_as


def check_run_name(name: str) -> None:
    """Refuse a run name that would write outside ``--out`` (a path, ``..``, hidden).

    >>> check_run_name("k3_cs800")
    >>> check_run_name("../x")
    Traceback (most recent call last):
    ...
    ragaudit.exceptions.InputError: --name: expected a file name (letters, digits, ._-), found \
'../x'; the run is written inside --out
    """
    if not name or name in (".", "..") or name.startswith(".") or any(c in name for c in "/\\\0"):
        raise InputError(
            f"--name: expected a file name (letters, digits, ._-), found {name!r}; "
            "the run is written inside --out"
        )


@dataclass(frozen=True)
class RunConfig:
    """One configuration of the reference pipeline (what ``ragaudit run`` is given).

    The cheap checks run on construction (``k >= 1``, ``limit >= 1``, a known chunker,
    generator and judge mode, ``judge_repeats >= 1`` with LLM judges); the rest (a readable
    corpus, ``chunk_size > chunk_overlap``, a known retriever, golden sources that name corpus
    documents) when the run loads its inputs, still before anything is written.

    Attributes
    ----------
    corpus : str or Path
        Directory of ``.md``/``.txt`` documents.
    golden : str or Path
        Golden-set YAML file.
    k : int, default 5
        Chunks given to the generator, and the cut-off of the metrics.
    chunk_size, chunk_overlap : int, default 800, 100
    chunker : str, default "fixed"
    retriever : str, default "bm25"
    generator : {"extractive", "openai"}
    judges : {"offline", "llm"}
    run_file : str or Path, optional
        A precomputed run used instead of the retriever.
    embedding_model, qdrant_url : str, optional
        For the dense and qdrant retrievers.
    name : str, optional
        Default :func:`default_name`.
    out_dir : str or Path, default "ragaudit-results"
    limit : int, optional
        Only the first ``limit`` questions.
    seed : int, default 0
    chunk_labels : Qrels, optional
        Chunk-level labels for the ``chunk_`` metrics.
    record_latency : bool, default True
        Without latency every byte of the saved run is reproducible.
    llm_config : LLMConfig, optional
        Endpoint of the LLM generator and judges (default: the environment).
    judge_repeats : int, default 1
    reader_temperature : float, default 0.0
        The extractive reader's temperature (0: deterministic); above 0 each (question,
        repeat) draws its answer from its own seed, stored as ``config.reader_temperature``.
    golden_columns : mapping, optional
        ``{field: column}`` naming the golden set's columns (``--map``), overriding the names
        recognised by :data:`~ragaudit.data.golden_fields.GOLDEN_COLUMNS`.
    save_as : {"json", "parquet"}, default "json"
        The saved run's format: ``<out_dir>/<name>.json`` or ``<out_dir>/<name>.parquet``.
    repeats : int, default 1
        Generations per question (``config.repeats`` of the saved run when above 1).

    Examples
    --------
    >>> RunConfig("docs", "golden.yaml", k=3).run_name
    'k3_cs800'
    >>> RunConfig("docs", "golden.yaml", k=0)
    Traceback (most recent call last):
    ragaudit.exceptions.InputError: k: expected an integer >= 1, found 0
    """

    corpus: str | Path
    golden: str | Path
    k: int = 5
    chunk_size: int = 800
    chunk_overlap: int = 100
    chunker: str = "fixed"
    retriever: str = "bm25"
    generator: str = "extractive"
    judges: str = "offline"
    run_file: str | Path | None = None
    embedding_model: str | None = None
    qdrant_url: str | None = None
    name: str | None = None
    out_dir: str | Path = "ragaudit-results"
    limit: int | None = None
    seed: int = 0
    chunk_labels: Qrels | None = None
    record_latency: bool = True
    llm_config: LLMConfig | None = None
    judge_repeats: int = 1
    golden_columns: Mapping[str, str] | None = None
    reader_temperature: float = 0.0
    save_as: str = "json"
    repeats: int = 1

    def __post_init__(self) -> None:
        check_positive("k", self.k)
        check_positive("repeats", self.repeats)
        check_save_as(self.save_as)
        if self.limit is not None:
            check_positive("limit", self.limit)
        if self.chunker not in CHUNKERS:
            raise InputError(
                f"chunker: expected one of {', '.join(CHUNKERS)}, found {self.chunker!r}"
            )
        if self.generator not in GENERATORS:
            raise InputError(
                f"generator: expected one of {', '.join(GENERATORS)}, found {self.generator!r}"
            )
        if self.judges not in JUDGE_MODES:
            raise InputError(
                f"judges: expected one of {', '.join(JUDGE_MODES)}, found {self.judges!r}"
            )
        if self.judges == "llm":
            check_int(self.judge_repeats, "judge_repeats")
        if self.reader_temperature != 0 and self.generator != "extractive":
            raise InputError("reader_temperature: only applies with the extractive generator")

    @property
    def retriever_name(self) -> str:
        """``"run-file"`` when a precomputed run replaces the retriever, else ``retriever``."""
        return "run-file" if self.run_file is not None else self.retriever

    @property
    def run_name(self) -> str:
        """``name``, or :func:`default_name` of this configuration."""
        return self.name or default_name(
            self.k, self.chunk_size, self.chunker, self.retriever_name, self.generator
        )
