import os
import stat

import pytest

from ragaudit._io import atomic_write_text


def _mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_new_file_gets_the_mode_open_would_give(tmp_path):
    umask = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "report.json", "{}")
    finally:
        os.umask(umask)
    assert _mode(tmp_path / "report.json") == 0o644  # 0o666 & ~0o022


def test_replacing_keeps_the_existing_mode_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "run.json"
    target.write_text("old")
    target.chmod(0o640)
    atomic_write_text(target, "new")
    assert target.read_text() == "new" and _mode(target) == 0o640
    assert os.listdir(tmp_path) == ["run.json"]


def test_an_interrupted_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    target = tmp_path / "run.json"
    target.write_text("old")

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["run.json"]
