"""A probe server for tests and benches that attack it: on 127.0.0.1 in a namespace of its own,
its log in a file, its threads, descriptors and CPU time readable, and the peers of
`probe_peers.py` run beside it in the same namespace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tcpeval.lab.netns import listening_address
from tcpeval.probe import probe_binary
from tcpeval.probe.netns import Lab, lab, secret_file
from tcpeval.processes import die_with_parent

PEERS = Path(__file__).with_name("probe_peers.py")


@dataclass
class Served:
    the_lab: Lab
    port: int
    secret: Path
    process: subprocess.Popen[str]
    log: Path
    # Where peers run, and the address they reach the server at.
    peer_ns: str
    host: str = "127.0.0.1"

    def peer_command(self, mode: str, *args: str) -> list[str]:
        return [
            "ip", "netns", "exec", self.peer_ns, sys.executable, str(PEERS), mode, self.host,
            str(self.port), "--secret-file", str(self.secret), *args,
        ]  # fmt: skip

    def peers(self, mode: str, *args: str, timeout_s: float = 120) -> dict:
        """Runs peers to their end; what they printed."""
        done = subprocess.run(
            self.peer_command(mode, *args), capture_output=True, text=True,
            timeout=timeout_s, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def start_peers(self, mode: str, *args: str) -> subprocess.Popen[str]:
        """Starts peers beside the test; stopped with the namespace if the test fails."""
        process = subprocess.Popen(
            self.peer_command(mode, *args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, preexec_fn=die_with_parent,
        )  # fmt: skip
        self.the_lab.processes.append(process)
        return process

    def threads(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/task"))

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def rss_bytes(self) -> int:
        """The server's resident memory (VmRSS)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise ValueError("no VmRSS")

    def cpu_s(self) -> float:
        """User and system CPU time the server has used."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(the_lab: Lab, ns: str, listen: str, tmp_path: Path, *flags: str,
          wrapper: tuple[str, ...] = ()) -> Served:  # fmt: skip
    """Starts `tcpeval-probe serve` in `ns` on `listen` (port 0), its log in
    `tmp_path/server.log`; peers run in `ns` and reach it on loopback until told otherwise."""
    secret = secret_file(tmp_path)
    log = tmp_path / "server.log"
    command = [
        "ip", "netns", "exec", ns, *wrapper, str(probe_binary()), "serve", "--listen", listen,
        "--secret-file", str(secret), *flags,
    ]  # fmt: skip
    with log.open("w") as stderr:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=stderr, text=True, preexec_fn=die_with_parent
        )
    the_lab.processes.append(process)
    port = int(listening_address(process, "the probe server").rsplit(":", 1)[1])
    return Served(the_lab, port, secret, process, log, peer_ns=ns)


@contextmanager
def served(tmp_path: Path, *flags: str, wrapper: tuple[str, ...] = ()) -> Iterator[Served]:
    """A server on 127.0.0.1 in a fresh namespace, removed with everything it ran."""
    with lab() as the_lab:
        ns = the_lab.namespace("s")
        yield start(the_lab, ns, "127.0.0.1:0", tmp_path, *flags, wrapper=wrapper)
