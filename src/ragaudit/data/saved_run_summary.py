"""Moved to :mod:`ragaudit.data.saved_run.summary`; the old name still imports its public names."""

from ragaudit.data.saved_run.summary import *  # noqa: F403
from ragaudit.data.saved_run.summary import __all__ as __all__
from ragaudit.data.saved_run.summary import summarise_run as summarise_run
