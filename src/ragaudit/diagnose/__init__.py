"""Diagnostics: where evaluation numbers mislead (the funnel, label bias, metric illusions)."""
