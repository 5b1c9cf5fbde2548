"""Relevance labels, runs, chunk->document maps, golden sets and their file formats."""

from __future__ import annotations

from ragaudit.data.qrels import Qrels
from ragaudit.data.runs import Run

__all__ = ["Qrels", "Run"]
