"""The lab's emulator speaks netem's dialect (crates/netem/src/spec.rs), as the simulator does:
the resolved scenario's link entries go into its config untouched, and the emulator parses
them. Also how a lab run sets ECN per namespace, and what ECN it refuses."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tcpeval.backends import lab as lab_backend
from tcpeval.lab import emulator
from tcpeval.lab.emulator import Endpoint
from tcpeval.lab.netns import LabError
from tcpeval.lab.run import TCP_ECN_ASK, TCP_ECN_OFF, Group, _one_way_delays_ns, _tcp_ecn
from tcpeval.lab.topology import Host, Topology
from tcpeval.probe.binary import find_binary
from tcpeval.scenario import parse_scenario, resolution

# Names no interface of this host has: the emulator parses and validates its config, then
# stops at the first interface, which is what these tests want of it.
LEFT, RIGHT = "tlcfgtestl", "tlcfgtestr"


def topology() -> Topology:
    receiver = Host("tlxr", "tlxr", "10.201.2.1", "02:74:6c:02:00:00", 1500)
    sender = Host("tlxs0", "tlxs0", "10.201.1.1", "02:74:6c:01:00:00", 1500)
    return Topology("tlx", "tlxe", LEFT, RIGHT, receiver, senders=[sender])


def resolved_link(bottleneck: dict) -> dict:
    data = {"name": "c", "duration": "10s", "bottleneck": bottleneck,
            "flow": [{"cc": "cubic", "rtt": "40ms"}]}  # fmt: skip
    return resolution(parse_scenario(data)).resolved["links"][0]


def config_for(link: dict, reverse_queue: bool = True, drop_at_ns: tuple[int, ...] = ()) -> dict:
    endpoints = [Endpoint("10.201.1.1", 20_000_000, 20_000_000, drop_at_ns)]
    return emulator.config(link, topology(), endpoints, reverse_queue, 10**10, 10**7)


# RED and CoDel as the scenario will resolve them once it carries their ECN keys (the
# integrator's part: resolve_aqm adds `ecn`, `harddrop`, `ce_threshold_ns`).
RED_MARKING = {"name": "red", "min_th_pkts": 83.3, "max_th_pkts": 250.0, "max_p": 0.1,
               "weight": 0.002, "gentle": True, "ecn": True, "harddrop": False}  # fmt: skip
CODEL_MARKING = {"name": "codel", "target_ns": 5_000_000, "interval_ns": 100_000_000,
                 "ecn": True, "ce_threshold_ns": None}  # fmt: skip


def test_the_resolved_links_entries_pass_through_untouched():
    link = resolved_link(
        {"rate": "100Mbps", "queue": "100pkt", "loss": 0.01, "policer": {"rate": "20Mbps"},
         "ack_loss": {"model": "gilbert_elliott", "p": 0.01, "r": 0.3},
         "reorder": {"share": 0.01, "delay": "2ms"}, "mtu_black_hole": 1400}
    )  # fmt: skip
    made = config_for(link)
    forward, reverse = made["forward"], made["reverse"]
    keys = ("rate_bps", "queue_pkts", "queue_bytes", "aqm", "loss", "policer", "reorder")
    for key in (*keys, "mtu_black_hole_bytes"):
        assert forward[key] == link[key], key
    assert (forward["reorder"], forward["mtu_black_hole_bytes"]) == (
        {"share": 0.01, "delay_ns": 2_000_000},
        1400,
    )
    # Reordering and the black hole are the forward direction's, as in the simulator.
    assert "reorder" not in reverse
    assert "mtu_black_hole_bytes" not in reverse
    assert (forward["queue_pkts"], forward["queue_bytes"]) == (100, None)
    assert forward["loss"] == {"model": "bernoulli", "p": 0.01}
    # The reverse direction: the same limit, drop-tail, the ACK path's loss, no policer.
    assert reverse["aqm"] == {"name": "droptail"}
    assert reverse["loss"] == link["reverse_loss"]
    assert (reverse["queue_pkts"], reverse["policer"]) == (100, None)
    assert reverse["rate_bps"] == link["rate_bps"]
    assert config_for(link, reverse_queue=False)["reverse"]["rate_bps"] is None
    assert (forward["seed"], reverse["seed"]) == (1, 2)


def emulate(config: dict, tmp_path: Path) -> str:
    """What the emulator says of `config` (it exits at the missing interface at best)."""
    path = tmp_path / "emulator.json"
    path.write_text(json.dumps(config | {"cpu": None}))
    outputs = ["--stats", str(tmp_path / "s.json"), "--samples", str(tmp_path / "l.csv")]
    command = [str(find_binary(emulator.BINARY)), "emulate", "--config", str(path), *outputs]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 2, done
    return done.stderr.strip()


@pytest.mark.parametrize(
    "bottleneck",
    [
        {"rate": "100Mbps", "queue": "100%bdp"},
        {"rate": "100Mbps", "queue": "100pkt", "loss": 0.001, "policer": {"rate": "20Mbps"}},
        {
            "rate": "100Mbps",
            "queue": "1MB",
            "ack_loss": {"model": "gilbert_elliott", "p": 0.01, "r": 0.3},
        },
        {"rate": "100Mbps", "reorder": {"share": 0.01, "delay": "2ms"}, "mtu_black_hole": 1400},
    ],
)
def test_the_emulator_parses_what_the_scenario_resolves(bottleneck: dict, tmp_path: Path):
    said = emulate(config_for(resolved_link(bottleneck)), tmp_path)
    assert said.startswith(f"error: config left: '{LEFT}' interface not found"), said


@pytest.mark.parametrize("aqm", [RED_MARKING, CODEL_MARKING])
def test_the_emulator_parses_marking_disciplines(aqm: dict, tmp_path: Path):
    link = resolved_link({"rate": "100Mbps", "queue": "100%bdp"}) | {"aqm": aqm}
    said = emulate(config_for(link), tmp_path)
    assert said.startswith(f"error: config left: '{LEFT}' interface not found"), said


def test_the_emulator_names_a_bad_value_by_its_path(tmp_path: Path):
    link = resolved_link({"rate": "100Mbps", "queue": "100%bdp"})
    link |= {"aqm": CODEL_MARKING | {"target_ns": 0}}
    said = emulate(config_for(link), tmp_path)
    assert said == "error: config forward.aqm.target_ns: '0' must be positive"
    link |= {"aqm": {"name": "fq"}}
    assert "unknown variant `fq`" in emulate(config_for(link), tmp_path)


def test_a_flows_forward_delay_is_its_data_directions_one_way_delay():
    flow = {"rtt_ns": 40_000_000, "forward_delay_ns": None, "reverse": False}
    assert _one_way_delays_ns(flow) == (20_000_000, 20_000_000)
    assert _one_way_delays_ns(flow | {"rtt_ns": 40_000_001}) == (20_000_000, 20_000_001)
    one_way = flow | {"forward_delay_ns": 30_000_000}
    assert _one_way_delays_ns(one_way) == (30_000_000, 10_000_000)
    # A reverse flow's data cross the emulator's reverse direction, right to left.
    assert _one_way_delays_ns(one_way | {"reverse": True}) == (10_000_000, 30_000_000)


def test_a_hosts_induced_losses_are_its_endpoints_entry(tmp_path: Path):
    link = resolved_link({"rate": "100Mbps", "queue": "100%bdp"})
    made = config_for(link, drop_at_ns=(8_000_000_000, 4_000_000_000))
    (endpoint,) = made["endpoints"]
    assert endpoint["drop_at_ns"] == [8_000_000_000, 4_000_000_000]
    assert (endpoint["forward_delay_ns"], endpoint["reverse_delay_ns"]) == (20_000_000,) * 2
    said = emulate(made, tmp_path)
    assert said.startswith(f"error: config left: '{LEFT}' interface not found"), said
    made["endpoints"][0]["drop_at_ns"] = [-1]
    assert "invalid value: integer `-1`" in emulate(made, tmp_path)


def lab_problems(**flow: object) -> list[tuple[str, str]]:
    scenario = parse_scenario(
        {"name": "d", "duration": "10s", "bottleneck": {"rate": "50Mbps"},
         "flow": [{"cc": "reno", "rtt": "20ms", "drop_at": ["4s", "8s"]} | flow]}
    )  # fmt: skip
    return [(p.field, str(p.error("lab"))) for p in lab_backend.BACKEND.supports(scenario)]


def test_drop_at_is_refused_only_where_the_emulator_cannot_tell_the_flow_apart():
    """The emulator knows a group's segments by its address: one flow's, when it is alone in
    its group and sends its data forward."""
    assert lab_problems() == []
    ((field, error),) = lab_problems(count=2)
    assert field == "flow[0].drop_at"
    assert "needs count = 1: the 2 flows of a group share its address" in error, error
    ((field, error),) = lab_problems(direction="reverse")
    assert field == "flow[0].drop_at"
    assert "forward path only" in error, error
    assert lab_problems(drop_at=[], count=2) == []
    assert "flow.drop_at" not in lab_backend.BACKEND.refused_keys()
    assert "flow.drop_every" in lab_backend.BACKEND.refused_keys()


def test_a_sender_namespace_asks_for_ecn_when_one_of_its_flows_wants_classic_ecn():
    assert _tcp_ecn(Group(0, [{"cc": "cubic"}])) == TCP_ECN_OFF  # no key yet: off
    assert _tcp_ecn(Group(0, [{"ecn": "off"}, {"ecn": "classic"}])) == TCP_ECN_ASK
    assert (TCP_ECN_ASK, TCP_ECN_OFF) == ("1", "0")
    # Prague's l4s (the backend lets it through for the BPF stacks with DCTCP's echo only)
    # runs on classic ECN negotiation.
    assert _tcp_ecn(Group(1, [{"ecn": "l4s"}])) == TCP_ECN_ASK
    with pytest.raises(LabError, match=r"flow\[2\]\.ecn: \['sce'\]"):
        _tcp_ecn(Group(2, [{"ecn": "sce"}]))


def test_l4s_is_refused_by_name(monkeypatch: pytest.MonkeyPatch):
    """L4S needs AccECN, which this kernel lacks: refused for a stack without DCTCP's echo to
    fall back on (cubic here; the resolution is patched, as the scenario refuses l4s for
    cubic before any backend sees it)."""
    scenario = parse_scenario(
        {"name": "l4s", "duration": "10s", "bottleneck": {"rate": "100Mbps"},
         "flow": [{"cc": "cubic", "rtt": "40ms"}, {"cc": "cubic", "rtt": "40ms", "count": 2}]}
    )  # fmt: skip

    def with_ecn(scenario, resolve=resolution):
        found = resolve(scenario)
        for flow in found.resolved["flows"]:
            flow["ecn"] = "l4s" if flow["group"] == 1 else "classic"
        return found

    monkeypatch.setattr(lab_backend, "resolution", with_ecn)
    problems = lab_backend.BACKEND.supports(scenario)
    assert [str(p.error("lab")) for p in problems] == [
        f"flow[1].ecn: 'l4s' {lab_backend.L4S_REASON} (backend 'lab')"
    ]


@pytest.mark.parametrize("cc", ["aimd", "htcp"])
def test_a_bpf_stack_on_a_kernel_that_cannot_run_one_is_refused_saying_why(
    cc: str, monkeypatch: pytest.MonkeyPatch
):
    why = "this kernel cannot run BPF congestion controls: no /sys/kernel/btf/vmlinux"
    monkeypatch.setattr(lab_backend.bpf, "unsupported", lambda: why)
    scenario = parse_scenario(
        {"name": "bpf", "duration": "10s", "bottleneck": {"rate": "100Mbps"},
         "flow": [{"cc": cc, "rtt": "40ms"}]}
    )  # fmt: skip
    (problem,) = lab_backend.BACKEND.supports(scenario)
    assert (problem.field, problem.value) == ("flow[0].cc", cc)
    assert problem.reason == f"is a BPF stack, and {why}"
