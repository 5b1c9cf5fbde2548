"""Moved to :mod:`ragaudit.data.saved_run.convert`; the old name still imports its public names."""

from ragaudit.data.saved_run.convert import *  # noqa: F403
from ragaudit.data.saved_run.convert import __all__ as __all__
