"""Shared checks of the harness tests."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest
from scipy.stats import binomtest


def exact_mcnemar_verdict(
    compare_json: str, left: Mapping[str, float], right: Mapping[str, float]
) -> str:
    """Hold ``compare --format json``'s one row to scipy's exact binomial test on the
    discordant counts taken from the two raw files (``left``, ``right``: question -> 0/1), and
    its interval to its verdict; return the verdict."""
    only_a = sum(left[i] == 1 and right[i] == 0 for i in left)
    only_b = sum(left[i] == 0 and right[i] == 1 for i in left)
    expected = binomtest(only_a, only_a + only_b, 0.5).pvalue
    [metric] = json.loads(compare_json)["metrics"]
    assert (metric["mcnemar"]["a_only"], metric["mcnemar"]["b_only"]) == (only_a, only_b)
    assert metric["p_value"] == pytest.approx(expected, abs=1e-12, rel=0)
    excludes_zero = metric["ci_low"] > 0 or metric["ci_high"] < 0
    assert excludes_zero == (metric["verdict"] == "SIGNIFICANT")
    return str(metric["verdict"])
