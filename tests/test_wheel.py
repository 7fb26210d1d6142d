"""The wheel `make dist` builds, installed as a user installs it: in a new virtualenv that
cannot see this checkout, its `tcpeval` runs the binaries the wheel carries — a `probe serve`
and a `probe tcp` across two namespaces, and a lab run.

The wheel is installed without its dependencies, which come from the environment running the
tests (a path entry, so the checkout's editable install there stays invisible): resolving and
unpacking them from the index took 25 s on this 2-core machine when quiet and 89 s under load,
for nothing this test checks. `pip check` still proves every dependency the wheel declares is met.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

from tcpeval.lab.netns import listening_address
from tcpeval.probe.netns import lab, secret_file
from tcpeval.processes import die_with_parent

CHECKOUT = Path(__file__).resolve().parents[1]
BINARIES = ("tcpeval-probe", "tcpeval-lab", "tcpeval-bpf")
# Generous bounds for a loaded 2-core machine; a hang fails the test instead of CI.
INSTALL_TIMEOUT_S = 120
RUN_TIMEOUT_S = 90


def the_wheel() -> Path:
    wheels = sorted((CHECKOUT / "dist").glob("tcpeval-*.whl"))
    if not wheels:
        if os.environ.get("CI"):
            pytest.fail("no wheel in dist/: `make test` runs `make dist` first")
        pytest.skip("no wheel in dist/: `make dist` builds it")
    assert len(wheels) == 1, wheels
    return wheels[0]


def pip_for(venv: Path) -> list[str]:
    python = str(venv / "bin" / "python")
    return [sys.executable, "-m", "pip", "--python", python, "--disable-pip-version-check", "-q"]


class Installed:
    """A virtualenv with the wheel installed, and how to run its commands as a user would:
    from a directory outside the checkout, with nothing pointing back into it."""

    def __init__(self, venv: Path, home: Path) -> None:
        self.venv = venv
        self.home = home
        self.bin = venv / "bin"
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith("TCPEVAL_")
            and key not in {"VIRTUAL_ENV", "PYTHONPATH", "CARGO_TARGET_DIR"}
        } | {"PATH": f"{self.bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}

    def run(self, *command: str, timeout_s: float = RUN_TIMEOUT_S) -> str:
        done = subprocess.run(
            command, cwd=self.home, env=self.env, capture_output=True, text=True,
            timeout=timeout_s, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{command}: {done.stderr}"
        return done.stdout

    def python(self, code: str) -> str:
        return self.run(str(self.bin / "python"), "-c", code).strip()


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    wheel = the_wheel()
    root = tmp_path_factory.mktemp("wheel")
    venv, home = root / "venv", root / "home"
    home.mkdir()
    # No pip of its own (ensurepip takes seconds): this environment's pip installs into it.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run([*pip_for(venv), "install", "--no-deps", str(wheel)], check=True,
                   timeout=INSTALL_TIMEOUT_S)  # fmt: skip
    # The dependencies: this environment's site-packages as a plain path entry. Its .pth files
    # (the editable install of this checkout among them) are read only in a site directory.
    packages = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    (packages / "site-packages" / "dependencies.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n"
    )
    return Installed(venv, home)


def test_the_installed_package_and_its_binaries_are_the_wheels(installed: Installed) -> None:
    located = json.loads(
        installed.python(
            "import json, tcpeval; from tcpeval.probe.binary import find_binary;"
            f"print(json.dumps([tcpeval.__file__] + [str(find_binary(b)) for b in {BINARIES}]))"
        )
    )
    for path in located:
        assert Path(path).is_relative_to(installed.venv), located
    for name in BINARIES:
        assert os.access(installed.bin / name, os.X_OK), name
    installed.run(*pip_for(installed.venv), "check")


def test_a_missing_binary_says_how_an_installed_copy_gets_it(installed: Installed) -> None:
    message = installed.python(
        "from tcpeval.probe.binary import MissingBinaryError, find_binary\n"
        "try:\n    find_binary('tcpeval-no-such-binary')\n"
        "except MissingBinaryError as error:\n    print(error)"
    )
    assert "installed without its binaries" in message, message
    assert "`make dist`" in message, message
    assert "release/" not in message, message  # no checkout's build to look in


def test_probe_serve_and_tcp_across_namespaces(installed: Installed, tmp_path: Path) -> None:
    tcpeval = str(installed.bin / "tcpeval")
    with lab() as the_lab:
        hosts = the_lab.pair()
        secret = secret_file(tmp_path)
        serve = [
            "ip", "netns", "exec", hosts.server_ns, tcpeval, "probe", "serve",
            "--listen", f"{hosts.server_ip}:0", "--secret-file", str(secret),
        ]  # fmt: skip
        server = subprocess.Popen(
            serve, cwd=installed.home, env=installed.env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, preexec_fn=die_with_parent,
        )  # fmt: skip
        the_lab.processes.append(server)
        address = listening_address(server, "`tcpeval probe serve` from the wheel")
        out = tmp_path / "probe"
        installed.run(
            "ip", "netns", "exec", hosts.client_ns, tcpeval, "probe", "tcp", address,
            "--secret-file", str(secret), "--duration", "1s", "--out", str(out),
        )  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert summary["flows"][0]["goodput_mbps"] > 0, summary["flows"]


def test_a_lab_run(installed: Installed, tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        'duration = "3s"\n[bottleneck]\nrate = "100Mbps"\nqueue = "100%bdp"\n'
        '[[flow]]\ncc = "reno"\nrtt = "20ms"\n'
    )
    out = tmp_path / "lab"
    installed.run(
        str(installed.bin / "tcpeval"), "run", str(scenario), "--backend", "lab", "--no-plots",
        "--out", str(out),
    )  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert summary["backend"]["name"] == "lab", summary["backend"]
    assert summary["flows"][0]["goodput_mbps"] > 0, summary["flows"]
