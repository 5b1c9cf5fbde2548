"""File formats for labels and runs: one reader per format, one dispatch.

=================  =====================================================================
module             reads and writes
=================  =====================================================================
``trec``           TREC runs ``qid Q0 docid rank score tag`` and qrels
                   ``qid iteration docid grade`` (pyarrow fast path, exact Python re-scan)
``jsonl``          JSON / JSON Lines, with one table of accepted key names (``KEY_ALIASES``)
``yaml_``          YAML, safely: plain data, bounded alias expansion
``pandas_``        pandas DataFrames (the ``pandas`` extra)
``dispatch``       which reader reads a file; label files, chunk->document maps
``columns``        the integer-coded columns every reader produces, ranked as trec_eval ranks
``_source``        reading text, JSON and JSON Lines the same way everywhere; exported here
                   (``read_text``, ``load_json``, ``read_json_file``, ``json_lines``,
                   ``shorten``) for the other readers of ``ragaudit.data``, labels and golden
                   sets
``strings``,       the compact string columns and the chunked TREC reading the metrics share
``chunked``
=================  =====================================================================

Every malformed input raises :class:`~ragaudit.exceptions.FormatError` naming file, line and
field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragaudit._lazy import lazy_package

if TYPE_CHECKING:
    from ragaudit.data.formats._source import (
        SURROGATE_ESCAPE,
        json_lines,
        load_json,
        lone_surrogate,
        read_json_file,
        read_text,
        shorten,
        unique_object,
    )
    from ragaudit.data.formats.columns import QrelsColumns, RunColumns, items_view
    from ragaudit.data.formats.dispatch import (
        declared_format,
        read_chunk_map,
        read_labels,
        read_qrels,
        read_ranked,
        read_run,
    )
    from ragaudit.data.formats.from_dicts import columns_from_rankings, run_columns
    from ragaudit.data.formats.jsonl import (
        KEY_ALIASES,
        read_jsonl_qrels,
        read_jsonl_run,
        write_jsonl_qrels,
        write_jsonl_run,
    )
    from ragaudit.data.formats.pandas_ import (
        qrels_from_dataframe,
        qrels_to_dataframe,
        run_from_dataframe,
        run_to_dataframe,
    )
    from ragaudit.data.formats.trec import (
        format_trec_qrels,
        format_trec_run,
        iter_run_chunks,
        load_arrays,
        read_qrels_columns,
        read_run_columns,
        read_trec_qrels,
        read_trec_run,
        write_trec_qrels,
        write_trec_run,
    )

# Imported on first use: golden sets and the CLI's --help need no numpy (start-up, issue 15).
_WHERE = {
    "KEY_ALIASES": "jsonl",
    "SURROGATE_ESCAPE": "_source",
    "json_lines": "_source",
    "lone_surrogate": "_source",
    "unique_object": "_source",
    "load_json": "_source",
    "read_json_file": "_source",
    "read_text": "_source",
    "shorten": "_source",
    "QrelsColumns": "columns",
    "RunColumns": "columns",
    "columns_from_rankings": "from_dicts",
    "declared_format": "dispatch",
    "format_trec_qrels": "trec",
    "format_trec_run": "trec",
    "items_view": "columns",
    "iter_run_chunks": "trec",
    "load_arrays": "trec",
    "qrels_from_dataframe": "pandas_",
    "qrels_to_dataframe": "pandas_",
    "read_chunk_map": "dispatch",
    "read_jsonl_qrels": "jsonl",
    "read_jsonl_run": "jsonl",
    "read_labels": "dispatch",
    "read_qrels": "dispatch",
    "read_qrels_columns": "trec",
    "read_ranked": "dispatch",
    "read_run": "dispatch",
    "read_run_columns": "trec",
    "read_trec_qrels": "trec",
    "read_trec_run": "trec",
    "run_columns": "from_dicts",
    "run_from_dataframe": "pandas_",
    "run_to_dataframe": "pandas_",
    "write_jsonl_qrels": "jsonl",
    "write_jsonl_run": "jsonl",
    "write_trec_qrels": "trec",
    "write_trec_run": "trec",
}

__all__ = [
    "KEY_ALIASES",
    "SURROGATE_ESCAPE",
    "QrelsColumns",
    "RunColumns",
    "columns_from_rankings",
    "declared_format",
    "format_trec_qrels",
    "format_trec_run",
    "items_view",
    "iter_run_chunks",
    "json_lines",
    "load_arrays",
    "load_json",
    "lone_surrogate",
    "qrels_from_dataframe",
    "qrels_to_dataframe",
    "read_chunk_map",
    "read_json_file",
    "read_jsonl_qrels",
    "read_jsonl_run",
    "read_labels",
    "read_qrels",
    "read_qrels_columns",
    "read_ranked",
    "read_run",
    "read_run_columns",
    "read_text",
    "read_trec_qrels",
    "read_trec_run",
    "run_columns",
    "run_from_dataframe",
    "run_to_dataframe",
    "shorten",
    "unique_object",
    "write_jsonl_qrels",
    "write_jsonl_run",
    "write_trec_qrels",
    "write_trec_run",
]

lazy_package(__name__, _WHERE)
