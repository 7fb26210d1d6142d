"""The lab's dumbbell, made of network namespaces and veths.

    sender ns s0 ─┐
    sender ns s1 ─┼─ switch ns (bridge) ── emulator ns ── receiver ns
    source ns c0 ─┘          left dev ┘       └ right dev

One namespace per flow group (so per-group sysctls such as SACK hold) and per CBR source;
one receiver holding every flow's far end. All hosts share one /16: the emulator relays
frames unchanged, a wire with a bottleneck in it. Neighbours are static (no ARP during a run)
and IPv6 is off (no neighbour discovery), so every frame the emulator sees is the traffic's.

Per-packet fidelity needs one packet per frame: `gso_max_segs 1` on every veth stops TSO/GSO
trains. All kernel receive work is steered to CPU `KERNEL_CPU` (RPS), leaving the emulator's
CPU to the emulator alone: shared, the emulator stalls and releases bursts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tcpeval.lab.ledger import Ledger
from tcpeval.lab.netns import ns_sh, sh
from tcpeval.models import HEADER_BYTES

KERNEL_CPU = 0
EMULATOR_CPU = 1
SUBNET_BITS = 16
RECEIVER_IP = "10.201.2.1"


@dataclass(frozen=True)
class Host:
    ns: str
    dev: str
    ip: str
    mac: str
    mtu_bytes: int


@dataclass
class Topology:
    prefix: str
    emulator_ns: str
    left_dev: str
    right_dev: str
    receiver: Host
    senders: list[Host] = field(default_factory=list)
    sources: list[Host] = field(default_factory=list)

    @property
    def left_hosts(self) -> list[Host]:
        return [*self.senders, *self.sources]

    def veths(self) -> list[tuple[str, str]]:
        """(namespace, device) of every veth end, for counters and settings."""
        ends = [(h.ns, h.dev) for h in [*self.left_hosts, self.receiver]]
        ends += [(self.emulator_ns, self.left_dev), (self.emulator_ns, self.right_dev)]
        switch = f"{self.prefix}w"
        ends += [(switch, f"{self.prefix}w{i}") for i in range(len(self.left_hosts))]
        return [*ends, (switch, f"{self.prefix}wl")]


def mtu_for(mss_bytes: int) -> int:
    """The IP packet of a full segment: MSS + 40 header bytes + 12 of the timestamp option."""
    return mss_bytes + HEADER_BYTES


def build(ledger: Ledger, sender_mtus: list[int], source_mtus: list[int]) -> Topology:
    """Makes the namespaces and links; every name is recorded in `ledger` before it exists."""
    p = ledger.prefix
    largest_mtu = max([*sender_mtus, *source_mtus])
    for role in ("e", "w", "r"):
        _namespace(ledger, f"{p}{role}")
    emulator, switch = f"{p}e", f"{p}w"
    receiver = Host(f"{p}r", f"{p}r", RECEIVER_IP, _mac(2, 0), largest_mtu)
    topology = Topology(p, emulator, f"{p}el", f"{p}er", receiver)
    _veth((emulator, topology.right_dev, None), (receiver.ns, receiver.dev, receiver.mac))
    _veth((switch, f"{p}wl", None), (emulator, topology.left_dev, None))
    ns_sh(switch, "ip", "link", "add", f"{p}br", "type", "bridge", "stp_state", "0")
    kinds = [("s", 1, sender_mtus, topology.senders), ("c", 3, source_mtus, topology.sources)]
    for role, net, mtus, hosts in kinds:
        for index, mtu in enumerate(mtus):
            host = Host(f"{p}{role}{index}", f"{p}{role}{index}", f"10.201.{net}.{index + 1}",
                        _mac(net, index), mtu)  # fmt: skip
            _namespace(ledger, host.ns)
            port = f"{p}w{len(topology.left_hosts)}"
            _veth((host.ns, host.dev, host.mac), (switch, port, None))
            hosts.append(host)
    for ns, dev in topology.veths():
        mtu = next((h.mtu_bytes for h in topology.left_hosts if h.dev == dev), largest_mtu)
        _configure(ns, dev, mtu, f"{p}br" if ns == switch else None)
    ns_sh(switch, "ip", "link", "set", f"{p}br", "up")
    for host in topology.left_hosts:
        _address(host)
        _neighbour(host, topology.receiver)
        _neighbour(topology.receiver, host)
    _address(topology.receiver)
    return topology


def _namespace(ledger: Ledger, name: str) -> None:
    ledger.add_namespace(name)
    sh("ip", "netns", "add", name)
    settings = ("net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
    for setting in settings:
        ns_sh(name, "sysctl", "-qw", setting)
    ns_sh(name, "ip", "link", "set", "lo", "up")


def _veth(a: tuple[str, str, str | None], b: tuple[str, str, str | None]) -> None:
    command = ["ip", "link", "add", a[1], "netns", a[0]]
    if a[2]:
        command += ["address", a[2]]
    command += ["type", "veth", "peer", b[1], "netns", b[0]]
    if b[2]:
        command += ["address", b[2]]
    sh(*command)


def _configure(ns: str, dev: str, mtu: int, bridge: str | None) -> None:
    ns_sh(ns, "ip", "link", "set", dev, "mtu", str(mtu), "gso_max_segs", "1")
    if bridge:
        ns_sh(ns, "ip", "link", "set", dev, "master", bridge)
    ns_sh(ns, "ip", "link", "set", dev, "up")
    queues = f"/sys/class/net/{dev}/queues/rx-*/rps_cpus"
    ns_sh(ns, "sh", "-c", f"for q in {queues}; do echo {1 << KERNEL_CPU:x} > $q; done")


def _address(host: Host) -> None:
    ns_sh(host.ns, "ip", "addr", "add", f"{host.ip}/{SUBNET_BITS}", "dev", host.dev)


def _neighbour(host: Host, peer: Host) -> None:
    ns_sh(host.ns, "ip", "neigh", "replace", peer.ip, "lladdr", peer.mac, "dev", host.dev,
          "nud", "permanent")  # fmt: skip


def _mac(net: int, index: int) -> str:
    """Locally administered, unicast, unique per host in the run."""
    return f"02:74:6c:{net:02x}:{index >> 8:02x}:{index & 0xFF:02x}"
