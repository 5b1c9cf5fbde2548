"""Regenerate docs/img/report.png: the demo's report.html in headless Debian chromium.

    uv run python scripts/report_screenshot.py [OUT_PNG]

Runs the offline demo into a temporary directory, opens report.html and saves the top of the
page as a PNG: the summary, the dashboard and the first run's funnel (chart and table).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from ragaudit.cli.demo import run_demo

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img/report.png")
    with tempfile.TemporaryDirectory() as tmp:
        ctx = run_demo(tmp, echo=lambda line: None)
        report = ctx.extra["report"]
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.goto(Path(report).resolve().as_uri())
            table = page.locator("#funnel ~ .scroll").first.bounding_box()
            assert table is not None
            height = round(table["y"] + table["height"] + 16)
            clip = {"x": 0, "y": 0, "width": 1100, "height": height}
            page.screenshot(path=str(out), full_page=True, clip=clip)
            browser.close()
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
