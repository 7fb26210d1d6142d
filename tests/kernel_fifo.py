"""How Linux's pfifo and bfifo count a queue of mixed packet sizes: evidence for what a
byte- or packet-counted bottleneck means (docs/contract.md, "How a queue counts").

A burst of Ethernet frames of two sizes (9014 and 3014 bytes: 9000- and 3000-byte IP
packets) is sent through a packet socket into a veth whose root is an htb class at 1 kbit/s
with the FIFO under test as its leaf: the bucket sends its 10000-byte burst and one frame
more, then the FIFO fills and nothing drains during the burst. `tc -s` gives the FIFO's backlog in
packets and bytes and what it sent; each `send` the kernel refused (ENOBUFS: NET_XMIT_DROP)
is a drop at the FIFO's tail. (A tbf parent was tried first: it keeps the FIFO's head
"peeked" outside the list, and the bfifo's byte backlog then read short of its packets.)

Everything runs in a network namespace of its own, made with `unshare --net` for the one
process that measures: nobody else holds it, so when that process dies, by any signal, the
kernel removes the namespace and its veth with it. The process itself dies with its parent
(PR_SET_PDEATHSIG). No traffic leaves it. Needs root, `unshare`, `ip` and `tc`.

    sudo .venv/bin/python bench/kernel_fifo.py     (prints; tests/test_kernel_fifo.py asserts)
"""

from __future__ import annotations

import errno
import json
import socket
import subprocess
import sys
from dataclasses import asdict, dataclass

JUMBO_FRAME_BYTES = 9014  # a 9000-byte IP packet plus the 14-byte Ethernet header
SMALL_FRAME_BYTES = 3014
MTU_BYTES = 9000
# A bucket that sends 10000 bytes and one frame more, then 125 bytes a second: a burst of
# a few ms leaves the FIFO's backlog as the burst made it.
SHAPER = ("rate", "1kbit", "ceil", "1kbit", "burst", "10000", "cburst", "10000")
ETHERTYPE = 0x88B5  # IEEE 802 local experimental: no stack in the namespace takes it
# Frames waiting in the FIFO count against the sending socket's buffer; a full buffer would
# block the send (or, without waiting, refuse it) before the FIFO decides. Room for them all.
SO_SNDBUFFORCE = 32
SEND_BUFFER_BYTES = 64 * 2**20
TIMEOUT_S = 30


@dataclass(frozen=True)
class Backlog:
    """What the FIFO held after the burst, and what it refused, by frame size."""

    qdisc: str
    limit: int
    backlog_pkts: int
    backlog_bytes: int
    sent_pkts: int
    drops: int
    accepted: dict[int, int]
    refused: dict[int, int]


def measure(qdisc: str, limit: int, sizes: list[int]) -> Backlog:
    """Sends frames of `sizes`, in order, into a fresh `qdisc` (pfifo or bfifo) of `limit`
    (packets or bytes) in a namespace of its own; returns what it held."""
    from tcpeval.processes import die_with_parent

    command = ["unshare", "--net", "--", sys.executable, __file__, "--inside", qdisc, str(limit)]
    done = subprocess.run(
        [*command, *map(str, sizes)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        preexec_fn=die_with_parent,
    )
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip() or done.returncode}")
    fields = json.loads(done.stdout)
    for key in ("accepted", "refused"):
        fields[key] = {int(size): n for size, n in fields[key].items()}
    return Backlog(**fields)


def alternating(count: int) -> list[int]:
    """`count` jumbo and `count` small frames, alternating: two flows arriving together."""
    return [JUMBO_FRAME_BYTES, SMALL_FRAME_BYTES] * count


def _inside(qdisc: str, limit: int, sizes: list[int]) -> Backlog:
    """In the private namespace: the veth, the htb class with the FIFO under it, the burst."""

    def sh(*command: str) -> str:
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout

    # No IPv6: its neighbour discovery would put frames of its own into the FIFO.
    sh("sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1")
    sh("ip", "link", "add", "fa", "mtu", str(MTU_BYTES), "type", "veth", "peer", "name", "fb")
    sh("ip", "link", "set", "fb", "mtu", str(MTU_BYTES), "up")
    sh("ip", "link", "set", "fa", "up")
    sh("tc", "qdisc", "add", "dev", "fa", "root", "handle", "1:", "htb", "default", "10")
    sh("tc", "class", "add", "dev", "fa", "parent", "1:", "classid", "1:10", "htb", *SHAPER)
    sh("tc", "qdisc", "add", "dev", "fa", "parent", "1:10", "handle", "10:", qdisc,
       "limit", str(limit))  # fmt: skip
    accepted = dict.fromkeys(sorted(set(sizes)), 0)
    refused = dict(accepted)
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as sock:
        sock.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, SEND_BUFFER_BYTES)
        sock.bind(("fa", ETHERTYPE))
        header = b"\xff" * 6 + b"\x02" + b"\x00" * 5 + ETHERTYPE.to_bytes(2, "big")
        for size in sizes:
            try:
                sock.send(header + bytes(size - len(header)), socket.MSG_DONTWAIT)
                accepted[size] += 1
            except OSError as error:
                if error.errno != errno.ENOBUFS:
                    raise
                refused[size] += 1
    stats = json.loads(sh("tc", "-s", "-j", "qdisc", "show", "dev", "fa"))
    fifo = next(q for q in stats if q["kind"] == qdisc)
    return Backlog(
        qdisc=qdisc,
        limit=limit,
        backlog_pkts=fifo["qlen"],
        backlog_bytes=fifo["backlog"],
        sent_pkts=fifo["packets"],
        drops=fifo["drops"],
        accepted=accepted,
        refused=refused,
    )


if __name__ == "__main__":
    qdisc, limit, *sizes = sys.argv[2:]  # argv[1] is --inside: see measure()
    print(json.dumps(asdict(_inside(qdisc, int(limit), [int(s) for s in sizes]))))
