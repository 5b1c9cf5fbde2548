"""The report's HTML read without the page's CSS (a notebook's ``_repr_html_``), and the
dashboard's units (issue 32 item 18)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from ragaudit.diagnose.audit_result import DashboardRow
from ragaudit.reports.audit_tables import dashboard_number, dashboard_value
from ragaudit.reports.render_html import render_html
from ragaudit.reports.report import Cell, Report, Section, Table


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def _visible(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return "".join(parser.parts)


def test_a_value_and_its_interval_stay_apart_without_the_page_css():
    cell = Cell("1.000", sub="[0.753, 1.000] 13/13", cls="val")
    report = Report("t", (Section("", (Table(("number", "run"), (("correct", cell),)),)),))
    text = _visible(render_html(report))
    assert "1.000 [0.753, 1.000] 13/13" in text
    assert not re.search(r"\d\[", text)


def _latency(value: float) -> DashboardRow:
    return DashboardRow("p95_latency", "p95 latency", value, value, float("inf"), 60, None, "",
                        None, "", "", unit="ms")  # fmt: skip


def test_latency_under_a_millisecond_is_in_milliseconds():
    assert dashboard_value(_latency(0.42), 0.42) == "0.420 ms"  # was "0.000 s"
    assert dashboard_value(_latency(20.1), 20.1) == "0.020 s"  # fixed width from 1 ms on
    assert dashboard_value(_latency(1520.0), 1520.0) == "1.520 s"
    assert dashboard_number(_latency(0.42)).startswith("0.420 ms [0.420 ms, inf] ")
