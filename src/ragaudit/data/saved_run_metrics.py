"""Moved to :mod:`ragaudit.data.saved_run.metrics`; the old name still imports its public names."""

from ragaudit.data.saved_run.metrics import *  # noqa: F403
from ragaudit.data.saved_run.metrics import __all__ as __all__
