"""scripts/serve_local_model.py without a model: finding, joining and checking GGUF files."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "serve_local_model.py"


@pytest.fixture(scope="module")
def serve() -> ModuleType:
    spec = importlib.util.spec_from_file_location("serve_local_model", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while building
    spec.loader.exec_module(module)
    return module


def _fake_split_model(root: Path, n: int) -> list[bytes]:
    """n installed packages pkgN/data/partNN.bin whose concatenation starts with b'GGUF'."""
    chunks = [b"GGUF" + b"a" * 10] + [bytes([65 + i]) * (7 + i) for i in range(1, n)]
    for i, chunk in enumerate(chunks, start=1):
        data = root / f"fakepart{i}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("")
        (data / f"part{i:02d}.bin").write_bytes(chunk)
    return chunks


def test_a_split_model_is_joined_in_order_once_and_atomically(
    serve: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = _fake_split_model(tmp_path / "site", 3)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    model = serve.LocalModel(
        name="fake",
        packages=("fakepart1", "fakepart2", "fakepart3"),
        pattern="data/part*.bin",
        filename="fake.gguf",
        context=512,
    )
    cache = tmp_path / "cache"
    path = serve.gguf_path(model, cache)
    assert path == cache / "fake.gguf"
    assert path.read_bytes() == b"".join(chunks)
    assert [p.name for p in cache.iterdir()] == ["fake.gguf"]  # no temporary file left
    # A complete file is reused, not rewritten.
    mtime = path.stat().st_mtime_ns
    assert serve.gguf_path(model, cache) == path and path.stat().st_mtime_ns == mtime
    # A truncated one (an interrupted copy made by hand) is rebuilt.
    path.write_bytes(b"GGUF")
    assert serve.gguf_path(model, cache).read_bytes() == b"".join(chunks)


def test_a_missing_package_names_the_group_to_install(serve: ModuleType, tmp_path: Path) -> None:
    model = serve.LocalModel("x", ("no_such_model_pkg_1234",), "*.gguf", "x.gguf", 512)
    with pytest.raises(
        serve.SetupError, match=r"'no_such_model_pkg_1234'.*uv sync --group local-llm"
    ):
        serve.gguf_path(model, tmp_path)


def test_a_file_that_is_not_gguf_is_refused(
    serve: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "site" / "notgguf_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "model.gguf").write_bytes(b"<html>not a model</html>")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    model = serve.LocalModel("x", ("notgguf_pkg",), "*.gguf", "x.gguf", 512)
    with pytest.raises(serve.SetupError, match=r"expected a GGUF model .*found b'<htm'"):
        serve.gguf_path(model, tmp_path / "cache")


def test_main_exits_2_with_one_line_when_the_model_is_not_installed(
    serve: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serve.importlib.util, "find_spec", lambda name: None)
    assert serve.main(["--model", "smollm2", "--print-path"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "uv sync --group local-llm" in err[0]
