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
=================  =====================================================================

Every malformed input raises :class:`~ragaudit.exceptions.FormatError` naming file, line and
field.
"""

from __future__ import annotations

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
    iter_run_chunks,
    load_arrays,
    read_qrels_columns,
    read_run_columns,
    read_trec_qrels,
    read_trec_run,
    write_trec_qrels,
    write_trec_run,
)

__all__ = [
    "KEY_ALIASES",
    "QrelsColumns",
    "RunColumns",
    "columns_from_rankings",
    "declared_format",
    "items_view",
    "iter_run_chunks",
    "load_arrays",
    "qrels_from_dataframe",
    "qrels_to_dataframe",
    "read_chunk_map",
    "read_jsonl_qrels",
    "read_jsonl_run",
    "read_labels",
    "read_qrels",
    "read_qrels_columns",
    "read_ranked",
    "read_run",
    "read_run_columns",
    "read_trec_qrels",
    "read_trec_run",
    "run_columns",
    "run_from_dataframe",
    "run_to_dataframe",
    "write_jsonl_qrels",
    "write_jsonl_run",
    "write_trec_qrels",
    "write_trec_run",
]
