"""Regenerate docs/img/report.png: the demo's report.html in headless Debian chromium.

    uv run python scripts/report_screenshot.py [OUT_PNG] [--width PX] [--full] [--html FILE]

Runs the offline demo into a temporary directory, opens report.html and saves the top of the
page as a PNG: the summary, the dashboard and the first run's funnel (chart and table).
``--width`` sets the viewport width (default 1100, the README image), ``--full`` saves the
whole page instead of its top, ``--html`` shoots an existing page instead of the demo's (to
compare two versions of the page).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from ragaudit.cli.demo import run_demo

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip


def shoot(report: Path, out: Path, width: int, full: bool) -> None:
    """Save ``report`` as seen in a ``width``-pixel viewport: its top, or the whole page."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(report.resolve().as_uri())
        if full:
            page.screenshot(path=str(out), full_page=True)
        else:
            table = page.locator("#funnel ~ .scroll").first.bounding_box()
            assert table is not None
            height = round(table["y"] + table["height"] + 16)
            clip = {"x": 0, "y": 0, "width": width, "height": height}
            page.screenshot(path=str(out), full_page=True, clip=clip)
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="docs/img/report.png")
    parser.add_argument("--width", type=int, default=1100)
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--html", type=Path, default=None)
    args = parser.parse_args()
    out = Path(args.out)
    if args.html is not None:
        shoot(args.html, out, args.width, args.full)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            ctx = run_demo(tmp, echo=lambda line: None)
            shoot(ctx.report, out, args.width, args.full)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
