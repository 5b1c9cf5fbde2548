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
import math
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["load_rounds", "render_paired", "render_rounds", "same_command"]

VERSION = 2
RAGAUDIT = ("ragaudit", "ragaudit-stream", "ragaudit-cli")
PEERS = ("pytrec_eval", "ranx (cold)", "ranx (warm)", "ir_measures")


def same_command(a: dict, b: dict) -> bool:
    """Rounds of one command on one kind of machine: the same sizes, tools, metric set, seed,
    architecture, core count and Python (repeats may differ)."""
    keys = ("sizes_asked", "tools", "metric_set", "seed", "machine")
    return all(a.get(k) == b.get(k) for k in keys)


def load_rounds(folder: Path, like: dict, since: str | None = None) -> list[dict]:
    """Every saved round in ``folder`` of the same command as ``like``, oldest first; with
    ``since`` (ISO time, UTC), only those started at or after it."""
    rounds = []
    for path in sorted(folder.glob("bench_metrics_*.json")):
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        recent = since is None or str(saved.get("started", ""))[:19] >= since[:19]
        if saved.get("version") == VERSION and same_command(saved, like) and recent:
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
    if isinstance(rounds[-1].get("metric_set"), list):
        return render_paired(rounds, command)
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
    header = _header(rounds, command)
    return "\n".join([header, "", *table, "", *[f"- {n}" for n in notes if n]])


def _header(rounds: list[dict], command: str) -> str:
    """When each round ran and at what load, the machine, the command and how to read it."""
    last = rounds[-1]
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
    return (
        f"{len(rounds)} round(s) on {', '.join(dates)} (UTC): {stamps}; {last['machine']}.  "
        f"`{command}`, run once per round: each tool ran {repeats} time(s) per round in fresh "
        f"processes, {order} (ranx and ir_measures fewer from 1M rows up); a time is the range "
        "of the rounds' medians, a ratio the range of the rounds' ratios of medians, the peak "
        "is the tool's process peak RSS."
    )


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


def _worst_gaps(rounds_rows: Iterable[dict[str, dict]]) -> dict[str, float]:
    """Per tool, the largest |mean - pytrec_eval's mean| over the shared metrics of every
    round that ran pytrec_eval (``rounds_rows``: each round's rows by tool)."""
    worst: dict[str, float] = {}
    for rows in rounds_rows:
        reference = rows.get("pytrec_eval", {}).get("means")
        if not reference:
            continue
        for tool, row in rows.items():
            if tool.startswith("floor") or tool == "pytrec_eval":
                continue
            shared = [m for m in reference if m in row["means"]]
            gap = max((abs(row["means"][m] - reference[m]) for m in shared), default=0.0)
            worst[tool] = max(worst.get(tool, 0.0), gap)
    return worst


def _means(rounds: list[dict], key: str) -> str:
    """The largest difference from pytrec_eval's means, per tool, over every round."""
    n_questions, depth = (int(x) for x in key.split("x"))
    worst = _worst_gaps(_by_tool(round_, key) for round_ in rounds)
    if not worst:
        return f"{n_questions:,} × {depth}: means not checked (pytrec_eval not run)"
    return (
        f"{n_questions:,} × {depth}: largest |mean - pytrec_eval mean| over shared metrics "
        "and rounds: " + ", ".join(f"{t} {g:.1e}" for t, g in worst.items())
    )


def _set_label(tool: str, metric_set: str) -> str:
    return f"{tool} [{metric_set}]"


def _lead(rounds: list[dict], key: str, metric_set: str, field: str) -> list[float]:
    """pytrec_eval ÷ ragaudit with one metric set, per round (``field``: whole or eval step)."""
    return _ratios(rounds, key, _set_label("pytrec_eval", metric_set),
                   _set_label("ragaudit", metric_set), field)  # fmt: skip


_PASS_FIELD = {"median_s": "walls", "eval_s": "evals"}


def _passes(row: dict, field: str) -> list[float] | None:
    """A row's per-run times in pass order (rounds saved with them), else None."""
    values = row.get(_PASS_FIELD[field])
    if not values or any(v is None for v in values):
        return None
    return [float(v) for v in values]


def _paired_ratios(
    rounds: list[dict], key: str, terms: list[tuple[str, str, int]], field: str = "median_s"
) -> list[float]:
    """Per round, the product over ``terms`` of ``(time(a) / time(b)) ** power``: taken within
    each pass and then the median over the passes when the round saved every run's time (runs
    of one pass ran minutes apart at most, under much the same load), else on its medians."""
    out = []
    for round_ in rounds:
        rows = _by_tool(round_, key)
        names = list(dict.fromkeys(name for a, b, _ in terms for name in (a, b)))
        if not all(name in rows and rows[name].get(field) for name in names):
            continue
        found = {name: _passes(rows[name], field) for name in names}
        times = {name: runs for name, runs in found.items() if runs is not None}
        n_passes = {len(runs) for runs in times.values()}
        if len(times) == len(names) and len(n_passes) == 1:
            per_pass = [
                math.prod((times[a][i] / times[b][i]) ** power for a, b, power in terms)
                for i in range(n_passes.pop())
            ]
            out.append(statistics.median(per_pass))
        else:
            medians = {name: float(rows[name][field]) for name in names}
            out.append(math.prod((medians[a] / medians[b]) ** p for a, b, p in terms))
    return out


def render_paired(rounds: list[dict], command: str) -> str:
    """The summary of paired rounds: several metric sets, every tool run once per set in each
    pass, so that the sets share the load.

    One row per metric set (each tool's time, pytrec_eval ÷ ragaudit for the whole process
    and for the evaluation step), then, for each later set, a row of ratios to the first set
    taken within each round: a tool's time with this set ÷ with the first, and this set's
    pytrec_eval ÷ ragaudit ÷ the first set's.  A ratio of ratios near 1 says the set keeps
    the first set's lead over pytrec_eval (issue 24).
    """
    last = rounds[-1]
    sets = [str(s) for s in last["metric_set"]]
    keys = list(last["sizes"])
    tools = [
        t
        for t in dict.fromkeys(
            str(row["tool"]).rsplit(" [", 1)[0] for r in rounds for k in keys
            for row in r["sizes"].get(k, [])
        )
        if not t.startswith("floor")
    ]  # fmt: skip
    ratio = "pytrec_eval" in tools and "ragaudit" in tools
    head = ["size", "metrics", *(f"{t} s" for t in tools)]
    if ratio:
        head += ["pytrec_eval / ragaudit", "pytrec_eval / ragaudit, evaluation step only"]
    head += ["ragaudit peak MB"]
    table = ["| " + " | ".join(head) + " |", "|---|---" + "|---:" * (len(head) - 2) + "|"]
    notes = []
    for key in keys:
        n_questions, depth = (int(x) for x in key.split("x"))
        size = f"{n_questions:,} × {depth}"

        for metric_set in sets:
            rows = _by_tool(last, key)
            ours = rows.get(_set_label("ragaudit", metric_set), {})
            names = ", ".join(ours.get("means", {})) or metric_set
            cells = [size, f"`{metric_set}`: {names}"]
            for tool in tools:
                label = _set_label(tool, metric_set)
                times = [float(_by_tool(r, key)[label]["median_s"]) for r in rounds
                         if label in _by_tool(r, key)]  # fmt: skip
                cells.append(_span(times, ".2f") if times else "-")
            if ratio:
                for field in ("median_s", "eval_s"):
                    values = _lead(rounds, key, metric_set, field)
                    cells.append(_span(values, ".2f", "x") if values else "-")
            peaks = [float(_by_tool(r, key)[label]["peak_mb"]) for r in rounds
                     for label in [_set_label("ragaudit", metric_set)]
                     if label in _by_tool(r, key)]  # fmt: skip
            cells.append(_span(peaks, ",.0f") if peaks else "-")
            table.append("| " + " | ".join(cells) + " |")
            notes.append(_set_means(rounds, key, metric_set))
        for metric_set in sets[1:]:
            cells = [size, f"`{metric_set}` ÷ `{sets[0]}`, within each round"]
            for tool in tools:
                this_set = [(_set_label(tool, metric_set), _set_label(tool, sets[0]), 1)]
                values = _paired_ratios(rounds, key, this_set)
                cells.append(_span(values, ".2f", "x") if values else "-")
            if ratio:
                # (pytrec_eval / ragaudit with this set) / (the same with the first set)
                terms = [
                    (_set_label("pytrec_eval", metric_set), _set_label("ragaudit", metric_set), 1),
                    (_set_label("pytrec_eval", sets[0]), _set_label("ragaudit", sets[0]), -1),
                ]
                for field in ("median_s", "eval_s"):
                    values = _paired_ratios(rounds, key, terms, field)
                    cells.append(_span(values, ".2f", "x") if values else "-")
            cells.append("-")
            table.append("| " + " | ".join(cells) + " |")
    header = (
        _header(rounds, command)
        + f"  Paired: in each pass every tool ran once with each metric set ({', '.join(sets)}"
        + _set_order(rounds)
        + "); "
        "a row `X ÷ Y` divides each tool's time with X by its time with Y, and X's "
        "pytrec_eval / ragaudit by Y's, within each pass (the median over the passes of a "
        "round; its range over rounds)."
    )
    return "\n".join([header, "", *table, "", *[f"- {n}" for n in notes if n]])


def _set_means(rounds: list[dict], key: str, metric_set: str) -> str:
    """The largest difference from pytrec_eval's means with one metric set, over every round."""
    n_questions, depth = (int(x) for x in key.split("x"))
    suffix = f" [{metric_set}]"
    worst = _worst_gaps(
        {t[: -len(suffix)]: r for t, r in _by_tool(round_, key).items() if t.endswith(suffix)}
        for round_ in rounds
    )
    if not worst:
        return ""
    return (
        f"{n_questions:,} × {depth}, `{metric_set}`: largest |mean - pytrec_eval mean| over "
        "shared metrics and rounds: " + ", ".join(f"{t} {g:.1e}" for t, g in worst.items())
    )


def _set_order(rounds: list[dict]) -> str:
    """How the passes ordered the metric sets: rotated from pass to pass, or not, or not
    before some round."""
    rotated = [str(r["started"])[11:16] for r in rounds if r.get("rotated")]
    if len(rotated) == len(rounds):
        return ", in an order rotated from pass to pass"
    if rotated:
        return f", in that order in the rounds before {min(rotated)}, rotated from then on"
    return ", in that order"
