"""The judges' outputs of a saved run are `Judgments`; the old name warns for one release."""

import pytest

import ragaudit.data.saved_run as saved_run


def test_old_name_warns_and_is_the_new_class() -> None:
    with pytest.warns(DeprecationWarning, match="JudgeVerdicts is renamed Judgments"):
        old = saved_run.JudgeVerdicts
    assert old is saved_run.Judgments


def test_unknown_names_still_raise() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        _ = saved_run.NoSuchThing  # type: ignore[attr-defined]
