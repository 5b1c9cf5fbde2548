"""The price table: lookup rules, cost formula, and one-line errors for bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragaudit.exceptions import FormatError
from ragaudit.llm.prices import DEFAULT_PRICES_PATH, ModelPrice, PriceTable


def test_shipped_table_loads_and_prices_by_prefix() -> None:
    table = PriceTable.load()
    assert table.source == "default"
    assert PriceTable.load(DEFAULT_PRICES_PATH).source == str(DEFAULT_PRICES_PATH)
    assert table.lookup("gpt-4o-mini") == ModelPrice(0.15, 0.60)
    # the longest listed prefix wins: gpt-4o-mini-..., not gpt-4o
    assert table.lookup("gpt-4o-mini-2024-07-18") == ModelPrice(0.15, 0.60)
    assert table.lookup("gpt-4o-2024-08-06") == ModelPrice(2.50, 10.00)
    assert table.lookup("claude-unknown") is None


def test_cost_formula() -> None:
    table = PriceTable({"m": ModelPrice(input=3.0, output=15.0)})
    assert table.cost("m", 2_000, 500) == pytest.approx(2_000 * 3.0 / 1e6 + 500 * 15.0 / 1e6)
    assert table.cost("m", 0, 0) == 0.0
    assert table.cost("other", 1, 1) is None


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("m: [1, 2]\n", r"prices\.yaml: m: expected \{input: USD per 1M tokens"),
        ("m: {input: 1}\n", r"prices\.yaml: m: expected \{input"),
        ("m: {input: -1, output: 2}\n", r"prices\.yaml: m: input: expected a non-negative number"),
        (
            "m: {input: 1, output: cheap}\n",
            r"m: output: expected a non-negative number, found 'cheap'",
        ),
        ("- just a list\n", r"prices\.yaml: expected a mapping model -> \{input, output\}"),
        ("m: {input: 1, output: [\n", r"prices\.yaml:\d+: invalid YAML"),
        ("m: !!python/object/apply:os.system [echo]\n", r"prices\.yaml:1: expected plain YAML"),
    ],
)
def test_bad_price_files(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(FormatError, match=match):
        PriceTable.load(path)


def test_missing_price_file(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"nope\.yaml: expected an existing file, found nothing"):
        PriceTable.load(tmp_path / "nope.yaml")


def test_empty_file_is_an_empty_table(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("# nothing yet\n")
    assert PriceTable.load(path).prices == {}
