"""The files of a result, sweep, suite and comparison directory, and the one way they are
published: written whole beside their place, then swapped into it, so that a killed run
leaves the old content or the new, never half of either.

Every published directory ends with a manifest, `tcpeval.json`: what wrote it, the format
version, and each file's size and SHA-256. It marks the directory as tcpeval's (only such a
directory is ever replaced) and says it is whole (a run of a sweep is done only when its
manifest checks out: a file truncated or deleted afterwards makes it damaged, to be re-run).

```
RESULT/   tcpeval.json summary.json flows.parquet links.parquet [capture.pcap] [*.png]
SWEEP/    grid.toml .lock runs/<run_id>/{tcpeval.json, params.json, RESULT files,
          summary.parquet | error.json}  .staging/ (runs being written)
SUITE/    suite.toml run.json <test>/SWEEP + measures.parquet  report.html
COMPARE/  compare.json compare.html <backend>/RESULT *.png
```
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from tcpeval.processes import alive

# Every published directory.
MANIFEST_FILE = "tcpeval.json"
FORMAT_VERSION = 1

# A result.
SUMMARY_FILE = "summary.json"
FLOWS_FILE = "flows.parquet"
LINKS_FILE = "links.parquet"
PCAP_FILE = "capture.pcap"

# A sweep.
GRID_FILE = "grid.toml"
LOCK_FILE = ".lock"
RUNS_DIR = "runs"
STAGING_DIR = ".staging"
PARAMS_FILE = "params.json"
ERROR_FILE = "error.json"
SUMMARY_TABLE = "summary.parquet"  # in each run: one row per flow

# A suite.
SUITE_FILE = "suite.toml"  # the suite as run: its tests and verdict rules
RUN_FILE = "run.json"  # the stack, the baseline, the backend, full or quick
MEASURES_FILE = "measures.parquet"  # in each test's sweep directory: one row per run
REPORT_FILE = "report.html"

# A comparison of backends.
COMPARE_FILE = "compare.json"
COMPARE_PAGE = "compare.html"


def publish_directory(
    target: Path,
    write: Callable[[Path], None],
    *,
    kind: str,
    staging: Path | None = None,
    keep_existing: Callable[[], bool] = lambda: False,
) -> bool:
    """Let `write` fill a fresh directory, add its manifest (`kind`: what it is), then put it
    at `target`, replacing what was there unless `keep_existing()` says, once the writing is
    done, that it must stay. The fresh directory is made in `staging` (default: beside the
    target; same filesystem either way), named after this process, so that what a killed
    process left there is removed by the next publish. Returns whether it was put in place."""
    staging = staging or target.parent
    staging.mkdir(parents=True, exist_ok=True)
    prefix = f".{target.name}.{os.getpid()}."
    _remove_abandoned(staging, f".{target.name}.")
    scratch = Path(tempfile.mkdtemp(prefix=prefix, dir=staging))
    try:
        work = scratch / target.name
        work.mkdir()  # mode as the umask says (mkdtemp's scratch is 0700, never published)
        write(work)
        write_manifest(work, kind)
        if keep_existing():
            return False
        target.parent.mkdir(parents=True, exist_ok=True)
        _swap_into_place(work, target, scratch / "retired")
        return True
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def write_manifest(directory: Path, kind: str) -> None:
    """List every file of `directory` with its size and SHA-256, as its last file."""
    files = {
        path.name: {"bytes": path.stat().st_size, "sha256": _sha256(path)}
        for path in sorted(directory.iterdir())
        if path.is_file() and path.name != MANIFEST_FILE
    }
    manifest = {"tcpeval": kind, "format": FORMAT_VERSION, "files": files}
    (directory / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """The manifest of a directory tcpeval published, or None (none there, or not ours)."""
    try:
        manifest = json.loads((directory / MANIFEST_FILE).read_text())
    except (OSError, ValueError):
        return None
    ours = isinstance(manifest, dict) and isinstance(manifest.get("format"), int)
    return manifest if ours and isinstance(manifest.get("files"), dict) else None


def damage(directory: Path) -> str | None:
    """Why `directory` is not whole as published (one line), or None when every file its
    manifest lists is there with its size and checksum."""
    manifest = read_manifest(directory)
    if manifest is None:
        return f"has no {MANIFEST_FILE} (not written whole)"
    for name, expected in manifest["files"].items():
        path = directory / name
        if not path.is_file():
            return f"{name} is missing"
        size = path.stat().st_size
        if size != expected.get("bytes"):
            return f"{name} has {size} bytes, {expected.get('bytes')} were written"
        if _sha256(path) != expected.get("sha256"):
            return f"{name} differs from what was written (checksum)"
    return None


def _sha256(path: Path) -> str:
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def _remove_abandoned(staging: Path, prefix: str) -> None:
    """Remove staging directories `prefix<pid>.*` whose process is gone (killed mid-save)."""
    for entry in staging.glob(f"{prefix}*"):
        pid = entry.name.removeprefix(prefix).partition(".")[0]
        if pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def _swap_into_place(new: Path, target: Path, retired: Path) -> None:
    """Put `new` at `target`; an old `target` ends up at `new`'s place. Where the kernel
    can exchange two names at once (renameat2, Linux 3.15+) there is no moment without a
    `target`; elsewhere the old one is moved to `retired` just before."""
    if target.exists() and _exchange(new, target):
        return
    if target.exists():
        target.rename(retired)
    new.rename(target)


def _exchange(first: Path, second: Path) -> bool:
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    code = renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if code == 0:
        return True
    if ctypes.get_errno() in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False  # a filesystem that cannot exchange
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(second))


def publish_file(path: Path, content: str | bytes | pd.DataFrame) -> None:
    """Write a file whole under a temporary name beside it, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    if isinstance(content, pd.DataFrame):
        content.to_parquet(partial, index=False)
    elif isinstance(content, bytes):
        partial.write_bytes(content)
    else:
        partial.write_text(content)
    partial.replace(path)
