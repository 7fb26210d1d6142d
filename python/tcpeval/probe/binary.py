"""Where the project's binaries (tcpeval-probe, tcpeval-lab, tcpeval-bpf) are, and how to get
them when they are not.

Looked for in this order:
1. `$TCPEVAL_<NAME>` (e.g. TCPEVAL_PROBE), and nowhere else when it is set: a path the user
   named is the one they mean;
2. where the installed wheel put them: its RECORD lists every file it installed, wherever the
   install scheme sent the scripts (a virtualenv's bin, `--user`'s ~/.local/bin, `--prefix`);
3. this Python's scripts directory (`make` copies them into .venv/bin);
4. in a source checkout, Cargo's release directory ($CARGO_TARGET_DIR or target/).
"""

from __future__ import annotations

import importlib.metadata
import os
import sysconfig
from pathlib import Path

PROBE = "tcpeval-probe"
DISTRIBUTION = "tcpeval"
# python/tcpeval/probe/binary.py → the checkout's root, when this file is in one.
_CHECKOUT = Path(__file__).resolve().parents[3]


class MissingBinaryError(FileNotFoundError):
    """A binary is not where this copy of tcpeval looks; the message says how to get it."""


def env_var(name: str) -> str:
    """tcpeval-probe → TCPEVAL_PROBE."""
    return name.upper().replace("-", "_")


def find_binary(name: str) -> Path:
    """The binary to run; MissingBinaryError names every place looked in and how to get it."""
    named = os.environ.get(env_var(name))
    if named:
        if _executable(Path(named)):
            return Path(named)
        raise MissingBinaryError(
            f"{env_var(name)}={named}: not an executable file; point it at a {name} binary "
            "or unset it"
        )
    candidates = [*_installed_by_wheel(name), Path(sysconfig.get_path("scripts")) / name]
    if _in_checkout():
        candidates.append(_cargo_release_dir() / name)
    for candidate in candidates:
        if _executable(candidate):
            return candidate
    looked = ", ".join(str(c) for c in dict.fromkeys(candidates))
    raise MissingBinaryError(f"{name} not found (looked in {looked}); {_how_to_get(name)}")


def probe_binary() -> Path:
    return find_binary(PROBE)


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _installed_by_wheel(name: str) -> list[Path]:
    """Where the installed distribution's RECORD says it put `name` (a wheel from `make dist`
    carries the binaries as scripts; a build from source lists none)."""
    try:
        distribution = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return []
    files = distribution.files or []
    return [Path(str(distribution.locate_file(f))).resolve() for f in files if f.name == name]


def _in_checkout() -> bool:
    """True when this package runs from a source tree (`make`'s editable install)."""
    return (_CHECKOUT / "crates" / "probe" / "Cargo.toml").is_file()


def _cargo_release_dir() -> Path:
    target = os.environ.get("CARGO_TARGET_DIR")
    return (Path(target) if target else _CHECKOUT / "target") / "release"


def _how_to_get(name: str) -> str:
    """The way to get the binary for the way this copy of tcpeval was installed."""
    if _in_checkout():
        return (
            f"this tcpeval runs from the source checkout {_CHECKOUT}: `make demo` (or `make "
            f"test`) builds {name} and copies it into .venv/bin"
        )
    return (
        "this tcpeval was installed without its binaries (installing from source builds only "
        "the simulator core): install the wheel that carries them, built in a checkout by "
        f"`make dist` (`pip install dist/tcpeval-*.whl`), or set {env_var(name)} to a {name} "
        "binary"
    )
