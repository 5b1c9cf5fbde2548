"""Token prices: a user-editable YAML table, model -> USD per 1M input and output tokens.

``cost = input_tokens * input_price / 1e6 + output_tokens * output_price / 1e6``.
A shipped default table (``prices.yaml`` next to this module) can be replaced with
``--prices FILE``.  Unknown models cost ``None`` ("unknown"), never zero.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ragaudit._io import read_file_bytes
from ragaudit._yaml import load_yaml
from ragaudit.exceptions import FormatError, unreadable

__all__ = ["DEFAULT_PRICES_PATH", "ModelPrice", "PriceTable"]

DEFAULT_PRICES_PATH = Path(__file__).with_name("prices.yaml")


@dataclass(frozen=True)
class ModelPrice:
    """USD per one million input and output tokens."""

    input: float
    output: float


class PriceTable:
    """Look up prices by model name: exact match first, then the longest listed prefix.

    Parameters
    ----------
    prices : mapping of str to ModelPrice
    source : str
        Where the table came from (shown in reports).

    Examples
    --------
    >>> table = PriceTable({"gpt-4o-mini": ModelPrice(0.15, 0.60)})
    >>> table.cost("gpt-4o-mini-2024-07-18", input_tokens=1_000_000, output_tokens=500_000)
    0.45
    >>> table.cost("mystery-model", 10, 10) is None
    True
    """

    def __init__(self, prices: Mapping[str, ModelPrice], source: str = "<dict>") -> None:
        self.prices = dict(prices)
        self.source = source

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> PriceTable:
        """Read a YAML table (default: the shipped one).

        Each entry is ``model: {input: USD_per_1M, output: USD_per_1M}``; errors name the file
        and the model.
        """
        source = Path(path) if path is not None else DEFAULT_PRICES_PATH
        # "default" rather than an install path, so saved runs do not depend on the machine.
        label = "default" if path is None else str(path)
        try:
            text = read_file_bytes(source).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise unreadable(source, exc) from None
        raw = load_yaml(text, str(source))
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise FormatError(
                f"expected a mapping model -> {{input, output}}, found {type(raw).__name__}",
                path=str(source),
            )
        prices: dict[str, ModelPrice] = {}
        for model, entry in raw.items():
            if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
                raise FormatError(
                    f"expected {{input: USD per 1M tokens, output: USD per 1M tokens}}, "
                    f"found {entry!r}",
                    path=str(source),
                    field=str(model),
                )
            values = []
            for side in ("input", "output"):
                value = entry[side]
                if (
                    isinstance(value, bool)
                    or not isinstance(value, (int, float))
                    or not math.isfinite(value)
                    or value < 0
                ):
                    raise FormatError(
                        f"{side}: expected a non-negative number, found {value!r}",
                        path=str(source),
                        field=str(model),
                    )
                values.append(float(value))
            prices[str(model)] = ModelPrice(values[0], values[1])
        return cls(prices, source=label)

    def lookup(self, model: str) -> ModelPrice | None:
        """The price entry for ``model`` (exact, else longest prefix), or ``None``."""
        if model in self.prices:
            return self.prices[model]
        candidates = [name for name in self.prices if model.startswith(name)]
        if not candidates:
            return None
        return self.prices[max(candidates, key=len)]

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """USD for the given token counts, rounded to 1e-9; ``None`` if the model is unknown."""
        price = self.lookup(model)
        if price is None:
            return None
        usd = input_tokens * price.input / 1e6 + output_tokens * price.output / 1e6
        return round(usd, 9)
