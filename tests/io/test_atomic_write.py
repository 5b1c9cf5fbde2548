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


def test_an_unwritable_path_is_one_error_naming_the_target(tmp_path, monkeypatch):
    # Regression: write failures surfaced as the *reading* message and named the temporary
    # file ("/proc/.x.123.abc.tmp: expected an existing file, found nothing at this path").
    from ragaudit._io import append_text
    from ragaudit.exceptions import FormatError

    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(FormatError) as under_a_file:
        atomic_write_text(blocker / "out.json", "{}")
    assert str(under_a_file.value) == (
        f"{blocker / 'out.json'}: expected a writable path, found a file where a directory "
        "should be"
    )
    with pytest.raises(FormatError) as a_directory:
        append_text(tmp_path, "x")
    assert str(a_directory.value) == f"{tmp_path}: expected a writable path, found a directory"

    # a failure while writing (disk full) removes the temporary and names the target
    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(FormatError) as disk_full:
        atomic_write_text(tmp_path / "run.json", "{}")
    assert str(disk_full.value) == (
        f"{tmp_path / 'run.json'}: expected a writable path, found no space left on device"
    )
    assert sorted(os.listdir(tmp_path)) == ["file"]
