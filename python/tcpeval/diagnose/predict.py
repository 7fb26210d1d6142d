"""What other stacks would get on the measured path: the path run through our simulator as a
scenario (its capacity, minimum RTT and loss rate, a queue of one BDP), once per candidate.
A prediction, stated as one, for the advice on a loss-limited path (docs/diagnose.md).
"""

from __future__ import annotations

from tcpeval import backends
from tcpeval.backends.protocol import Backend
from tcpeval.scenario import parse_scenario

CANDIDATES = ("reno", "cubic", "htcp", "highspeed", "scalable", "bic", "bbr")
DURATION_S = 30
# Above this many packets per candidate the run is shortened (simulated time, not accuracy
# of the steady state, is what costs).
MAX_PACKETS = 20_000_000


def stack_goodputs(capacity_bps: float, rtt_ms: float, loss: float) -> dict[str, float]:
    """Goodput in b/s over the second half of a single-flow run, per candidate stack."""
    sim = backends.get("sim")
    available = set(sim.algorithms())
    return {
        cc: _second_half_goodput(sim, capacity_bps, rtt_ms, loss, cc)
        for cc in CANDIDATES
        if cc in available
    }


def _second_half_goodput(
    sim: Backend, capacity_bps: float, rtt_ms: float, loss: float, cc: str
) -> float:
    packets_per_s = capacity_bps / (1500 * 8)
    duration_s = max(10, min(DURATION_S, int(MAX_PACKETS / packets_per_s)))
    scenario = parse_scenario(
        {
            "name": f"diagnose-{cc}",
            "duration": f"{duration_s}s",
            "bottleneck": {
                "rate": f"{int(capacity_bps)}bps",
                "queue": "100%bdp",
                "loss": loss,
            },
            "flow": [{"cc": cc, "rtt": f"{rtt_ms:.3f}ms"}],
        }
    )
    flows = backends.run(scenario, sim).flows
    half_s = duration_s / 2
    first_half = flows[flows["t_s"] <= half_s]["delivered_bytes"]
    at_half = first_half.iloc[-1] if len(first_half) else 0.0
    return float((flows["delivered_bytes"].iloc[-1] - at_half) * 8 / half_s)
