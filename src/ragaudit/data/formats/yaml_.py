"""YAML for the format readers: the one safe loader lives in :mod:`ragaudit._yaml`."""

from __future__ import annotations

from ragaudit._yaml import MAX_NODES, compose_yaml, construct_yaml, load_yaml

__all__ = ["MAX_NODES", "compose_yaml", "construct_yaml", "load_yaml"]
