"""Moved to :mod:`ragaudit.data.saved_run.check`; the old name still imports its public names."""

from ragaudit.data.saved_run.check import *  # noqa: F403
from ragaudit.data.saved_run.check import __all__ as __all__
