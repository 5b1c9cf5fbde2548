"""Benchmark and coverage scripts, each run as ``uv run python benchmarks/NAME.py``.

A package too, so that tests import the one copy of a simulation
(``from benchmarks import coverage_stats``; pytest puts the repository root on ``sys.path``,
``pythonpath`` in pyproject.toml) instead of loading a script by its file path.
"""
