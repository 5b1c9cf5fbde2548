"""Relevance labels, runs, chunk->document maps, golden sets and their file formats."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragaudit._lazy import lazy_package

if TYPE_CHECKING:
    from ragaudit.data.qrels import Qrels
    from ragaudit.data.runs import Run

_WHERE = {
    "Qrels": "qrels", "Run": "runs",
}  # fmt: skip

__all__ = ["Qrels", "Run"]

lazy_package(__name__, _WHERE)
