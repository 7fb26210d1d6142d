"""What the analytical models know of each algorithm: its response function (mean window at
loss rate p), its back-off factor β behind a drop-tail queue, and its window's regrowth after
one loss. None where no model exists: the backend then says "no model" rather than guess.

Sources: docs/methodology.md §4 (Mathis, RFC 3649, Kelly, RFC 9438); the β values are the
algorithms' own (RFC 3649, Kelly 2003, Leith & Shorten 2004, RFC 9438).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tcpeval import models

# The algorithms with a response function, and those whose window after a loss the models
# can follow (`window_after_loss_pkts`).
RESPONSE = ("reno", "aimd", "highspeed", "scalable", "cubic")
REGROWTH = ("reno", "aimd", "cubic", "scalable")


@dataclass(frozen=True)
class Stack:
    """One flow's algorithm with its parameters (defaults filled in) and ACK policy."""

    cc: dict[str, Any]
    delayed_ack: bool

    @property
    def name(self) -> str:
        return str(self.cc["name"])

    @property
    def has_response(self) -> bool:
        return self.name in RESPONSE

    def _aimd(self) -> tuple[float, float]:
        """(a per RTT, b) of Reno or AIMD: a is halved when delayed ACKs are counted per ACK
        (models.acked_per_increase)."""
        a, b = (1.0, 0.5) if self.name == "reno" else (self.cc["a"], self.cc["b"])
        return a / models.acked_per_increase(self.delayed_ack, self.cc["abc"]), b

    def response_window_pkts(self, p: float, rtt_s: float) -> float | None:
        """The mean window at per-packet loss rate p, or None without a response function."""
        if self.name in ("reno", "aimd"):
            return models.aimd_window_pkts(p, *self._aimd())
        if self.name == "highspeed":
            return models.hstcp_response_window_pkts(p)
        if self.name == "scalable":
            return self.cc["a"] / (self.cc["b"] * p)
        if self.name == "cubic":
            return models.cubic_window_pkts(
                p, rtt_s, self.cc["c"], self.cc["beta"], self.cc["reno_friendly"]
            )
        return None

    def response_formula(self) -> str:
        return {
            "reno": "Mathis: (MSS/RTT)·C/√p",
            "aimd": "AIMD(a, b): √(a(2−b)/(2bp)) packets",
            "highspeed": "HighSpeed: 0.12/p^0.835 packets (RFC 3649)",
            "scalable": "Scalable: a/(b·p) packets",
            "cubic": "CUBIC: 1.054·RTT^0.75/p^0.75 packets (RFC 9438)",
        }.get(self.name, "none")

    def backoff(self, bdp_pkts: float, queue_pkts: float) -> float | None:
        """β, the share of the window kept after a congestion event at window BDP + Q; None
        for delay- and rate-based stacks, which do not cycle through a sawtooth."""
        window = bdp_pkts + queue_pkts
        if self.name in ("reno", "aimd"):
            return 1 - self._aimd()[1]
        if self.name == "highspeed":
            return 1 - _hstcp_decrease(window)
        if self.name == "scalable":
            return 1 - float(self.cc["b"])
        if self.name in ("cubic", "bic"):
            return float(self.cc["beta"])
        if self.name == "htcp":
            # β = RTTmin/RTTmax = BDP/(BDP + Q), clipped to [0.5, 0.8] (H-TCP's adaptive back-off,
            # Leith & Shorten, PFLDnet 2004; Linux tcp_htcp.c).
            adaptive = min(max(bdp_pkts / window, 0.5), 0.8)
            return adaptive if self.cc["beta_adaptive"] else 0.5
        return None

    def window_after_loss_pkts(self, window_pkts: float, t_s: float, rtt_s: float) -> float:
        """The window t seconds after one loss at `window_pkts` (an algorithm of REGROWTH)."""
        if self.name in ("reno", "aimd"):
            a, b = self._aimd()
            return models.aimd_window_after_loss_pkts(window_pkts, t_s, rtt_s, a, b)
        if self.name == "cubic":
            return models.cubic_window_after_loss_pkts(
                window_pkts, t_s, self.cc["c"], self.cc["beta"]
            )
        a, b = self.cc["a"], self.cc["b"]
        return models.scalable_window_after_loss_pkts(window_pkts, t_s, rtt_s, a, b)


def _hstcp_decrease(window_pkts: float) -> float:
    """HighSpeed TCP's b(w): 0.5 at Low_Window = 38 packets down to 0.1 at High_Window = 83000,
    linear in log w (RFC 3649 §5)."""
    low, high = 38.0, 83000.0
    if window_pkts <= low:
        return 0.5
    w = min(window_pkts, high)
    return 0.5 + (0.1 - 0.5) * (math.log(w) - math.log(low)) / (math.log(high) - math.log(low))
