"""Options and output helpers shared by several subcommands."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

import click

__all__ = ["format_option", "render_csv", "render_json", "seed_option"]


def format_option(*choices: str, default: str = "table") -> Any:
    """``--format`` with the given choices."""
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(list(choices)),
        default=default,
        show_default=True,
        help="Output format.",
    )


def seed_option(default: int = 0) -> Any:
    """``--seed`` for every random procedure (the seed is always printed in the output)."""
    return click.option("--seed", type=int, default=default, show_default=True, help="Random seed.")


def render_json(obj: Any) -> str:
    """Deterministic JSON: sorted keys where the producer did not order them, fixed indent."""
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_csv(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """CSV with a header row and ``\\n`` line endings."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()
