"""Network namespaces for the probe's tests and bench: made by the caller, always removed.

`lab()` yields a Lab whose namespaces carry a unique prefix; on exit it kills every process
it started (by PID) and deletes every namespace (which removes their veths and qdiscs).
Traffic stays inside these namespaces. Needs root (`ip netns`, `tc`).
"""

from __future__ import annotations

import itertools
import os
import secrets
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tcpeval.lab.netns import LabError, listening_address, ns_sh, sh, spawn
from tcpeval.probe import probe_binary

_counter = itertools.count()

# How long a server started in a namespace may take to listen.
LISTEN_TIMEOUT_S = 10


@dataclass
class Hosts:
    client_ns: str
    server_ns: str
    client_ip: str
    server_ip: str
    router_ns: str | None = None


@dataclass
class Lab:
    prefix: str
    namespaces: list[str] = field(default_factory=list)
    processes: list[subprocess.Popen[str]] = field(default_factory=list)

    def sh(self, *command: str) -> str:
        return sh(*command)

    def in_ns(self, ns: str, *command: str) -> str:
        return ns_sh(ns, *command)

    def namespace(self, role: str) -> str:
        name = f"{self.prefix}{role}"
        self.sh("ip", "netns", "add", name)
        self.namespaces.append(name)
        self.in_ns(name, "ip", "link", "set", "lo", "up")
        return name

    def link(self, a: str, a_ip: str, b: str, b_ip: str, tag: str) -> tuple[str, str]:
        """A veth pair between namespaces a and b, addressed /24; returns the two names."""
        a_dev, b_dev = f"{self.prefix}{tag}a", f"{self.prefix}{tag}b"
        self.sh("ip", "link", "add", a_dev, "netns", a, "type", "veth", "peer", b_dev, "netns", b)
        for ns, dev, ip in ((a, a_dev, a_ip), (b, b_dev, b_ip)):
            self.in_ns(ns, "ip", "addr", "add", f"{ip}/24", "dev", dev)
            self.in_ns(ns, "ip", "link", "set", dev, "up")
        return a_dev, b_dev

    def pair(self) -> Hosts:
        """Two hosts joined by one veth, no bottleneck."""
        client, server = self.namespace("c"), self.namespace("s")
        self.link(client, "10.77.1.1", server, "10.77.1.2", "x")
        return Hosts(client, server, "10.77.1.1", "10.77.1.2")

    def routed(self, rate_bps: int, queue_bytes: int) -> Hosts:
        """client — router — server; the router's two egresses are an htb class at
        `rate_bps` with a bfifo of `queue_bytes`: the bottleneck both ways."""
        client, router, server = self.namespace("c"), self.namespace("r"), self.namespace("s")
        _, r_to_client = self.link(client, "10.77.1.1", router, "10.77.1.254", "p")
        r_to_server, _ = self.link(router, "10.77.2.254", server, "10.77.2.1", "q")
        self.in_ns(router, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        self.in_ns(client, "ip", "route", "add", "default", "via", "10.77.1.254")
        self.in_ns(server, "ip", "route", "add", "default", "via", "10.77.2.254")
        for dev in (r_to_client, r_to_server):
            self.bottleneck(router, dev, rate_bps, queue_bytes)
        return Hosts(client, server, "10.77.1.1", "10.77.2.1", router)

    def bottleneck(self, ns: str, dev: str, rate_bps: int, queue_bytes: int) -> None:
        tc = ("ip", "netns", "exec", ns, "tc")
        self.sh(*tc, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10")
        self.sh(*tc, "class", "add", "dev", dev, "parent", "1:", "classid", "1:10", "htb",
                "rate", f"{rate_bps}bit", "ceil", f"{rate_bps}bit")  # fmt: skip
        self.sh(*tc, "qdisc", "add", "dev", dev, "parent", "1:10", "handle", "10:", "bfifo",
                "limit", str(queue_bytes))  # fmt: skip

    def spawn(self, ns: str, *command: str) -> subprocess.Popen[str]:
        process = spawn(ns, command)
        self.processes.append(process)
        return process

    def wait_listening(self, server: subprocess.Popen[str], ns: str, port: int) -> None:
        wait_listening(server, ns, port)

    def server(self, ns: str, ip: str, secret: Path, *limits: str) -> str:
        """Starts `tcpeval-probe serve` in `ns` on an ephemeral port; returns HOST:PORT."""
        process = self.spawn(
            ns, str(probe_binary()), "serve", "--listen", f"{ip}:0", "--secret-file", str(secret),
            *limits,
        )  # fmt: skip
        return listening_address(process, "the probe server")

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=10)
            for pipe in (process.stdout, process.stderr):
                if pipe is not None:
                    pipe.close()
        for ns in self.namespaces:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)


@contextmanager
def lab() -> Iterator[Lab]:
    # Interface names are at most 15 bytes: prefix (≤ 9) + tag + side.
    prefix = f"tp{os.getpid() % 100000}{next(_counter)}"
    the_lab = Lab(prefix)
    try:
        yield the_lab
    finally:
        the_lab.close()


def secret_file(directory: Path, name: str = "secret") -> Path:
    path = directory / name
    path.write_text(secrets.token_hex(32) + "\n")
    path.chmod(0o600)
    return path


def wait_listening(server: subprocess.Popen[str], ns: str, port: int) -> None:
    """Waits until `server`, started in `ns`, listens on TCP `port`: one that prints
    nothing once bound (`iperf3 -s -J`) is ready only then, and how long it takes to start
    depends on the load. Raises if it exits first or is not listening within 10 s."""
    deadline = time.monotonic() + LISTEN_TIMEOUT_S
    while not ns_sh(ns, "ss", "-Hltn", f"sport = :{port}").strip():
        if server.poll() is not None:
            _, err = server.communicate()
            raise LabError(
                f"the server in {ns} exited {server.returncode} before listening on port "
                f"{port}: {err.strip()}"
            )
        if time.monotonic() > deadline:
            raise LabError(f"nothing listened on port {port} in {ns} within {LISTEN_TIMEOUT_S} s")
        time.sleep(0.05)
