"""Put a benchmark's own output into README.md, between ``<!-- NAME -->`` and ``<!-- /NAME -->``.

The README's speed tables are therefore exactly what the script printed (issue 15: "the README
table comes from that script's output").
"""

from __future__ import annotations

import os
import platform
from datetime import datetime, timezone
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def splice(name: str, text: str, readme: Path = README) -> None:
    """Replace the lines between the two markers called ``name`` with ``text`` (atomically)."""
    begin, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    content = readme.read_text(encoding="utf-8")
    if begin not in content or end not in content:
        raise SystemExit(f"{readme}: markers {begin} ... {end} not found")
    head, rest = content.split(begin, 1)
    _, tail = rest.split(end, 1)
    tmp = readme.with_suffix(".md.tmp")
    tmp.write_text(f"{head}{begin}\n{text.strip()}\n{end}{tail}", encoding="utf-8")
    os.replace(tmp, readme)


def machine() -> str:
    """Architecture, cores and Python version."""
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def start(title: str) -> tuple[datetime, float]:
    """Print the run's header (time, machine, load) and return its start time and load."""
    started, load = datetime.now(timezone.utc), os.getloadavg()
    print(f"# {title}  {started:%Y-%m-%d %H:%M} UTC")
    print(
        f"machine: {machine()}; load average at start {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}"
    )
    return started, load[0]


def measured(started: datetime, load: float) -> str:
    """``Measured <date> <start>-<end> UTC on <machine>; load average ...`` for a summary."""
    end = datetime.now(timezone.utc)
    return (
        f"Measured {started:%Y-%m-%d %H:%M}-{end:%H:%M} UTC on {machine()}; load average "
        f"{load:.1f} at start, {os.getloadavg()[0]:.1f} at end."
    )
