"""Rounds of ``bench_metrics.py``: each invocation is saved as one round; the README quotes ranges.

A single quiet run flatters: on a shared machine the same command gives ratios that move with
the load (issue 25: another machine measured pytrec_eval ÷ ragaudit 3.3-4.0x where one quiet
run had given 5.4-5.6x).  So every invocation writes its results, with its load at start and
end, as one JSON file (a *round*), and the summary is rendered over every round of the same
command (same sizes, tools and metric set) found in the results folder: each time is the range
of the rounds' medians, each ratio the range of the rounds' ratios of medians, and the header
lists every round's time and load.  Memory is given in MB, beside the files' line counts and
bytes per line (the peak per file byte depends on the line length).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

__all__ = ["load_rounds", "render_rounds", "same_command"]

VERSION = 2
RAGAUDIT = ("ragaudit", "ragaudit-stream", "ragaudit-cli")
PEERS = ("pytrec_eval", "ranx (cold)", "ranx (warm)", "ir_measures")


def same_command(a: dict, b: dict) -> bool:
    """Rounds of one command on one kind of machine: the same sizes, tools, metric set, seed,
    architecture, core count and Python (repeats may differ)."""
    keys = ("sizes_asked", "tools", "metric_set", "seed", "machine")
    return all(a.get(k) == b.get(k) for k in keys)


def load_rounds(folder: Path, like: dict) -> list[dict]:
    """Every saved round in ``folder`` of the same command as ``like``, oldest first."""
    rounds = []
    for path in sorted(folder.glob("bench_metrics_*.json")):
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if saved.get("version") == VERSION and same_command(saved, like):
            rounds.append(saved)
    return sorted(rounds, key=lambda r: str(r["started"]))


def _span(values: Sequence[float], fmt: str, unit: str = "") -> str:
    lo, hi = min(values), max(values)
    if f"{lo:{fmt}}" == f"{hi:{fmt}}":
        return f"{lo:{fmt}}{unit}"
    return f"{lo:{fmt}}-{hi:{fmt}}{unit}"


def _lines(count: int) -> str:
    return f"{count / 1e6:.1f}M" if count >= 100_000 else f"{count:,}"


def _files_cell(files: dict) -> str:
    run_b, qrels_b = files["run_bytes"], files["qrels_bytes"]
    run_n, qrels_n = files["run_lines"], files["qrels_lines"]
    total = (run_b + qrels_b) / 1e6
    size = f"{total:,.0f} MB" if total >= 10 else f"{total:.1f} MB"
    return (
        f"run {_lines(run_n)} lines × {run_b / max(run_n, 1):.0f} B, qrels {_lines(qrels_n)} "
        f"× {qrels_b / max(qrels_n, 1):.0f} B ({size})"
    )


def _by_tool(round_: dict, key: str) -> dict[str, dict]:
    return {str(r["tool"]): r for r in round_["sizes"].get(key, [])}


def _ratios(
    rounds: list[dict], key: str, num: str, den: str, field: str = "median_s"
) -> list[float]:
    out = []
    for round_ in rounds:
        rows = _by_tool(round_, key)
        if num in rows and den in rows and rows[num].get(field) and rows[den].get(field):
            out.append(float(rows[num][field]) / float(rows[den][field]))
    return out


def render_rounds(rounds: list[dict], command: str) -> str:
    """The markdown summary over ``rounds`` (see the module docstring)."""
    last = rounds[-1]
    keys = list(last["sizes"])
    tools = list(dict.fromkeys(t for r in rounds for k in keys for t in _by_tool(r, k)))
    peers = [t for t in tools if t in PEERS]
    ours = [t for t in tools if t in RAGAUDIT]
    head = ["size", "files (lines × bytes per line)"] + [f"{t} s" for t in tools]
    pairs: list[tuple[str, str]] = []
    if "floor" in tools and "ragaudit" in tools:
        pairs.append(("ragaudit", "floor"))
    if "ragaudit" in tools:
        pairs += [(t, "ragaudit") for t in tools if t not in ("floor", "ragaudit")]
    head += [f"{a} / {b}" for a, b in pairs]
    # the evaluation step alone (files already read): start-up and parsing left out
    evaluation = "pytrec_eval" in tools and "ragaudit" in tools
    if evaluation:
        head.append("pytrec_eval / ragaudit, evaluation step only")
    memory = [t for t in tools if t.startswith(("ragaudit", "floor"))]
    head += [f"{t} peak MB (/ files)" for t in memory]
    table = ["| " + " | ".join(head) + " |", "|---|---" + "|---:" * (len(head) - 2) + "|"]
    notes: list[str] = []
    for key in keys:
        n_questions, depth = (int(x) for x in key.split("x"))
        files = last["files"][key]
        files_mb = (files["run_bytes"] + files["qrels_bytes"]) / 1e6
        cells = [f"{n_questions:,} × {depth}", _files_cell(files)]
        for tool in tools:
            times = [float(_by_tool(r, key)[tool]["median_s"]) for r in rounds
                     if tool in _by_tool(r, key)]  # fmt: skip
            cells.append(_span(times, ".2f") if times else "-")
        for a, b in pairs:
            ratios = _ratios(rounds, key, a, b)
            cells.append(_span(ratios, ".2f", "x") if ratios else "-")
        if evaluation:
            ratios = _ratios(rounds, key, "pytrec_eval", "ragaudit", "eval_s")
            cells.append(_span(ratios, ".2f", "x") if ratios else "-")
        for tool in memory:
            peaks = [float(_by_tool(r, key)[tool]["peak_mb"]) for r in rounds
                     if tool in _by_tool(r, key)]  # fmt: skip
            per_byte = [p / files_mb for p in peaks]
            digits = ".2f" if peaks and max(per_byte) < 10 else ".0f"  # tiny files: start-up
            cells.append(
                f"{_span(peaks, ',.0f')} ({_span(per_byte, digits, 'x')})" if peaks else "-"
            )
        table.append("| " + " | ".join(cells) + " |")
        notes += _slower(rounds, key, ours, peers)
        notes.append(_means(rounds, key))
    stamps = "; ".join(
        f"{r['started'][11:16]}-{r['ended'][11:16]} at load {r['load_at_start']:.1f} → "
        f"{r['load_at_end']:.1f}"
        for r in rounds
    )
    dates = sorted({r["started"][:10] for r in rounds})
    repeats = _span([float(r["repeats"]) for r in rounds], ".0f")
    kinds = {bool(r.get("interleaved")) for r in rounds}
    if kinds == {True}:
        order = "the tools interleaved (one run of each per pass)"
    elif kinds == {False}:
        order = "each tool's runs one after another"
    else:
        since = min(r["started"][11:16] for r in rounds if r.get("interleaved"))
        order = (
            f"each tool's runs one after another in the rounds before {since}, the tools "
            "interleaved (one run of each per pass) from then on"
        )
    header = (
        f"{len(rounds)} round(s) on {', '.join(dates)} (UTC): {stamps}; {last['machine']}.  "
        f"`{command}`, run once per round: each tool ran {repeats} time(s) per round in fresh "
        f"processes, {order} (ranx and ir_measures fewer from 1M rows up); a time is the range "
        "of the rounds' medians, a ratio the range of the rounds' ratios of medians, the peak "
        "is the tool's process peak RSS."
    )
    return "\n".join([header, "", *table, "", *[f"- {n}" for n in notes if n]])


def _slower(rounds: list[dict], key: str, ours: list[str], peers: list[str]) -> list[str]:
    """Say where a ragaudit variant's whole process took longer than a peer's."""
    n_questions, depth = (int(x) for x in key.split("x"))
    out = []
    for tool in ours:
        slower = []
        for peer in peers:
            ratios = _ratios(rounds, key, peer, tool)
            if ratios and min(ratios) < 1:
                slower.append(f"{peer} ({peer} / {tool} {_span(ratios, '.2f', 'x')})")
        if not slower:
            continue
        starts = [float(_by_tool(r, key)[tool].get("startup_s") or 0) for r in rounds
                  if tool in _by_tool(r, key)]  # fmt: skip
        totals = [float(_by_tool(r, key)[tool]["median_s"]) for r in rounds
                  if tool in _by_tool(r, key)]  # fmt: skip
        why = (
            f"; of its {_span(totals, '.2f')} s, {_span(starts, '.2f')} s are start-up "
            "(interpreter and imports, before the files are opened)"
            if all(starts)
            else ""
        )
        out.append(f"{n_questions:,} × {depth}: **{tool} is slower** than " +
                   ", ".join(slower) + why)  # fmt: skip
    return out


def _means(rounds: list[dict], key: str) -> str:
    """The largest difference from pytrec_eval's means, per tool, over every round."""
    n_questions, depth = (int(x) for x in key.split("x"))
    worst: dict[str, float] = {}
    for round_ in rounds:
        rows = _by_tool(round_, key)
        reference = rows.get("pytrec_eval", {}).get("means")
        if not reference:
            continue
        for tool, row in rows.items():
            if tool.startswith("floor") or tool == "pytrec_eval":
                continue
            shared = [m for m in reference if m in row["means"]]
            gap = max((abs(row["means"][m] - reference[m]) for m in shared), default=0.0)
            worst[tool] = max(worst.get(tool, 0.0), gap)
    if not worst:
        return f"{n_questions:,} × {depth}: means not checked (pytrec_eval not run)"
    return (
        f"{n_questions:,} × {depth}: largest |mean - pytrec_eval mean| over shared metrics "
        "and rounds: " + ", ".join(f"{t} {g:.1e}" for t, g in worst.items())
    )
