"""What `--out` may replace: only a directory tcpeval marked as its result,
written whole and swapped in, honouring the umask, leaving no staging behind for long."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tcpeval
from helpers import SMALL_TOML, small_scenario
from tcpeval.layout import MANIFEST_FILE, damage, read_manifest
from tcpeval.result import DamagedResult, Result


@pytest.fixture(scope="module")
def result() -> Result:
    return tcpeval.simulate(small_scenario())


def test_a_directory_of_photos_is_never_replaced(tmp_path: Path) -> None:
    photos = tmp_path / "p"
    photos.mkdir()
    (photos / "holiday.png").write_bytes(b"\x89PNG")
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL_TOML)
    command = [sys.executable, "-m", "tcpeval", "sim", str(scenario), "--out", str(photos)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("error: --out: "), run.stderr
    assert len(run.stderr.splitlines()) == 1
    assert (photos / "holiday.png").read_bytes() == b"\x89PNG"


@pytest.mark.parametrize("names", [["summary.json"], ["flows.parquet", "a.png"], ["x.txt"]])
def test_only_a_marked_result_may_be_replaced(
    result: Result, tmp_path: Path, names: list[str]
) -> None:
    target = tmp_path / "out"
    target.mkdir()
    for name in names:
        (target / name).write_text("mine")
    with pytest.raises(FileExistsError, match=MANIFEST_FILE):
        result.save(target)
    assert sorted(path.name for path in target.iterdir()) == sorted(names)


def test_a_result_is_marked_with_format_and_checksums_and_replaced(
    result: Result, tmp_path: Path
) -> None:
    target = result.save(tmp_path / "out")
    manifest = read_manifest(target)
    assert manifest is not None
    assert manifest["tcpeval"] == "result"
    assert set(manifest["files"]) == {"summary.json", "flows.parquet", "links.parquet"}
    assert damage(target) is None
    result.save(target)  # an earlier result is replaced
    assert damage(target) is None
    empty = tmp_path / "empty"
    empty.mkdir()
    result.save(empty)  # as is an empty directory


def test_result_directories_honour_the_umask(result: Result, tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        target = result.save(tmp_path / "out")
    finally:
        os.umask(old)
    assert target.stat().st_mode & 0o777 == 0o755
    assert (target / "summary.json").stat().st_mode & 0o777 == 0o644


def test_staging_left_by_a_killed_save_is_removed_by_the_next(
    result: Result, tmp_path: Path
) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    ).stdout.strip()
    abandoned = tmp_path / f".out.{dead}.abc123"
    (abandoned / "out").mkdir(parents=True)
    result.save(tmp_path / "out")
    assert not abandoned.exists()
    assert [path.name for path in tmp_path.iterdir()] == ["out"]


def test_the_old_result_is_never_only_under_a_temporary_name(
    result: Result, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The swap is one rename (renameat2 RENAME_EXCHANGE): renaming the old result away first,
    as before, would leave it only under a temporary name until the new one is moved in."""
    target = result.save(tmp_path / "out")
    renames: list[tuple[Path, Path]] = []
    original = Path.rename

    def recording(self: Path, other: Path) -> Path:
        renames.append((self, Path(other)))
        return original(self, other)

    monkeypatch.setattr(Path, "rename", recording)
    result.save(target)
    assert renames == []
    assert damage(target) is None


def test_a_truncated_result_names_its_file_when_loaded(result: Result, tmp_path: Path) -> None:
    target = result.save(tmp_path / "out")
    summary = target / "summary.json"
    summary.write_text(summary.read_text()[:100])
    with pytest.raises(DamagedResult, match=r"out: summary.json has 100 bytes"):
        tcpeval.load(target)
