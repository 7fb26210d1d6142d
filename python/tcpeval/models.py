"""Analytical models of TCP, used as oracles beside simulated and measured results.

Windows are in packets, times in seconds, rates in bits per second, loss `p` per packet.
Formulas and their sources: docs/methodology.md §4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# IP + TCP header with timestamps: a packet on the wire is mss + HEADER_BYTES. Written once,
# in the core (crates/sim/src/scenario.rs).
from tcpeval._core import HEADER_BYTES as HEADER_BYTES


def bdp_pkts(rate_bps: float, rtt_s: float, packet_bytes: float) -> float:
    """Bandwidth-delay product in packets: rate·RTT / (8·packet size).

    E.g. 250 Mb/s × 42 ms with 1500-byte packets holds 875 packets (docs/methodology.md §4).
    """
    return rate_bps * rtt_s / (8 * packet_bytes)


def acked_per_increase(delayed_ack: bool, counts_packets: bool) -> int:
    """b of the Mathis and PFTK models: packets acknowledged by each ACK that grows the window
    (congestion avoidance adds 1/b packet per RTT). 2 with delayed ACKs when the sender counts
    ACKs (RFC 5681 as written); 1 with an ACK per packet, or when it counts packets (ABC,
    RFC 3465, as Linux and every stack here by default)."""
    return 2 if delayed_ack and not counts_packets else 1


def mathis_goodput_bps(mss_bytes: float, rtt_s: float, p: float, b: int = 1) -> float:
    """Reno's steady-state goodput under periodic loss: (MSS/RTT)·C/√p.

    Mathis, Semke, Mahdavi, Ott, "The macroscopic behavior of the TCP congestion avoidance
    algorithm", CCR 27(3), 1997. C = √(3/(2b)) (see `acked_per_increase`): √(3/2) ≈ 1.22 for
    b = 1, √(3/4) ≈ 0.87 for delayed ACKs counted per ACK (b = 2).
    """
    c = math.sqrt(3 / (2 * b))
    return 8 * mss_bytes / rtt_s * c / math.sqrt(p)


def pftk_goodput_bps(
    mss_bytes: float,
    rtt_s: float,
    p: float,
    rto_s: float,
    b: int = 1,
    max_window_pkts: float = math.inf,
) -> float:
    """Reno's goodput with timeouts and a receiver window: the full PFTK model (their eq. 31).

    Padhye, Firoiu, Towsley, Kurose, "Modeling TCP throughput: a simple model and its empirical
    validation", SIGCOMM 1998. Tends to Mathis as p → 0 and to Wmax/RTT when window-limited.
    `b` as for `mathis_goodput_bps`.
    """
    q = 1 - p
    mean_window = (2 + b) / (3 * b) + math.sqrt(8 * q / (3 * b * p) + ((2 + b) / (3 * b)) ** 2)
    window_limited = mean_window >= max_window_pkts
    w = max_window_pkts if window_limited else mean_window
    rounds = b / 8 * w + q / (p * w) + 2 if window_limited else b / 2 * w + 1
    # Q(p, w): the share of loss indications that are timeouts; G(p): their exponential backoff.
    timeouts = min(1.0, (1 - q**3) * (1 + q**3 * (1 - q ** (w - 3))) / (1 - q**w))
    backoff = 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6
    packets_per_cycle = q / p + w + timeouts / q
    cycle_s = rtt_s * rounds + timeouts * backoff * rto_s / q
    return 8 * mss_bytes * packets_per_cycle / cycle_s


def reno_recovery_time_s(window_pkts: float, rtt_s: float) -> float:
    """Time for Reno to regrow its window after one loss at window W: (W/2)·RTT.

    Halved to W/2 by the loss, congestion avoidance adds one packet per RTT (an ACK per packet,
    or packet counting; twice as long with delayed ACKs counted per ACK). docs/methodology.md §4.
    """
    return window_pkts / 2 * rtt_s


def reno_response_window_pkts(p: float) -> float:
    """Standard TCP's average window at loss rate p: 1.2/√p (RFC 3649 §1)."""
    return 1.2 / math.sqrt(p)


def hstcp_response_window_pkts(p: float) -> float:
    """HighSpeed TCP's average window at loss rate p: 0.12/p^0.835 (RFC 3649 §5).

    Below Low_Window = 38 packets HighSpeed TCP behaves as standard TCP (RFC 3649 §4).
    """
    reno = reno_response_window_pkts(p)
    return reno if reno <= 38 else 0.12 / p**0.835


def scalable_response_window_pkts(p: float) -> float:
    """Scalable TCP's average window at loss rate p: a/(b·p) = 0.08/p.

    MIMD with a = 0.01 per ACK and b = 0.125 per loss (Kelly, "Scalable TCP: improving
    performance in highspeed wide area networks", CCR 33(2), 2003); docs/methodology.md §4.
    """
    return 0.01 / (0.125 * p)


def aimd_window_pkts(p: float, a: float = 1.0, b: float = 0.5) -> float:
    """The mean window of AIMD(a, b) under periodic loss p: √(a(2−b)/(2bp)).

    A cycle grows the window from (1−b)W to W by a per RTT and carries 1/p packets at a mean
    window of (1−b/2)W; Reno (a = 1, b = 0.5) gives Mathis' √(3/(2p)) ≈ 1.22/√p (§10.1).
    """
    return math.sqrt(a * (2 - b) / (2 * b * p))


def cubic_window_pkts(
    p: float, rtt_s: float, c: float = 0.4, beta: float = 0.7, reno_friendly: bool = True
) -> float:
    """CUBIC's mean window at loss rate p: (c(3+β)/(4(1−β)))^¼ · RTT^¾ / p^¾, or Reno's
    1.2/√p where that is larger and the Reno-friendly region is on (RFC 9438 §5.1;
    1.054·RTT^0.75/p^0.75 with the defaults, docs/methodology.md §4)."""
    cubic = (c * (3 + beta) / (4 * (1 - beta))) ** 0.25 * rtt_s**0.75 / p**0.75
    return max(cubic, reno_response_window_pkts(p)) if reno_friendly else cubic


def sawtooth_utilization(bdp_pkts: float, queue_pkts: float, beta: float) -> float:
    """Share of the link that one flow (or synchronised flows) with back-off factor β keeps
    busy behind a drop-tail queue: the window sweeps evenly from β(BDP+Q) to BDP+Q, and the
    link is busy in proportion to min(W, BDP)/BDP. 1 once Q ≥ BDP·(1−β)/β (§10.4). Exact for
    AIMD's linear growth; for concave-convex growth (CUBIC) an approximation."""
    top = bdp_pkts + queue_pkts
    bottom = beta * top
    if bottom >= bdp_pkts:
        return 1.0
    below = (bdp_pkts**2 - bottom**2) / 2  # ∫ W dW while the pipe is not full
    above = bdp_pkts * (top - bdp_pkts)  # ∫ BDP dW while it is
    return (below + above) / ((top - bottom) * bdp_pkts)


def sawtooth_mean_queue_pkts(bdp_pkts: float, queue_pkts: float, beta: float) -> float:
    """The mean queue of the same sawtooth: the window beyond the BDP, averaged over the
    sweep from β(BDP+Q) to BDP+Q."""
    top = bdp_pkts + queue_pkts
    bottom = beta * top
    low = max(bdp_pkts, bottom)
    return ((top - bdp_pkts) ** 2 - (low - bdp_pkts) ** 2) / 2 / (top - bottom)


def aimd_window_after_loss_pkts(
    window_pkts: float, t_s: float, rtt_s: float, a: float = 1.0, b: float = 0.5
) -> float:
    """AIMD's window t seconds after one loss at window W: (1−b)W, then +a per RTT, up to W."""
    return min(window_pkts, (1 - b) * window_pkts + a * t_s / rtt_s)


def cubic_window_after_loss_pkts(
    window_pkts: float, t_s: float, c: float = 0.4, beta: float = 0.7
) -> float:
    """CUBIC's window t seconds after one loss at W: c(t−K)³ + W with K = ∛(W(1−β)/c), up to W
    (RFC 9438 §4.2; the Reno-friendly region left out)."""
    k_s = (window_pkts * (1 - beta) / c) ** (1 / 3)
    return min(window_pkts, c * (t_s - k_s) ** 3 + window_pkts)


def scalable_window_after_loss_pkts(
    window_pkts: float, t_s: float, rtt_s: float, a: float = 0.01, b: float = 0.125
) -> float:
    """Scalable TCP's window t seconds after one loss at W: (1−b)W growing by a factor (1+a)
    per RTT (a per acknowledged packet), up to W (Kelly 2003)."""
    return min(window_pkts, (1 - b) * window_pkts * (1 + a) ** (t_s / rtt_s))


def dctcp_alpha(w_star_pkts: float) -> float:
    """DCTCP's marked fraction α in the steady sawtooth: the exact root in [0, 1] of
    α²(1 − α/4) = (2W* + 1)/(W* + 1)² (Alizadeh et al., "Data Center TCP", SIGCOMM 2010, §3.3
    eq. 7), by bisection; not its approximation √(2/W*) (eq. 8), which is within about 1% from
    W* = 10 up but 5% high at W* = 5 and 19% at W* = 2. 1 when W* ≤ 1."""
    target = (2 * w_star_pkts + 1) / (w_star_pkts + 1) ** 2
    if target >= 0.75:  # α²(1 − α/4) rises on [0, 1] to 3/4 at α = 1
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if middle**2 * (1 - middle / 4) < target else (low, middle)
    return (low + high) / 2


@dataclass(frozen=True)
class DctcpCycle:
    """The sawtooth of N synchronised DCTCP flows through a step marker at K (packets)."""

    w_star_pkts: float
    """W* = (C·RTT + K)/N, each flow's window when the queue reaches K (eq. 5)."""
    alpha: float
    """The marked fraction, each flow's cut being α/2 (eq. 7, `dctcp_alpha`)."""
    amplitude_pkts: float
    """A = N·(W* + 1)·α/2, the queue's (the aggregate window's) swing (eqs. 9–10)."""
    q_max_pkts: float
    """K + N (eq. 12)."""
    q_min_pkts: float
    """K + N − A (eq. 13); below zero the link idles for part of each cycle."""
    utilization: float
    mean_queue_pkts: float


def dctcp_cycle(bdp_pkts: float, k_pkts: float, flows: int) -> DctcpCycle:
    """N long-lived DCTCP flows of one RTT through a step marker at K on a link whose pipe
    holds C·RTT = `bdp_pkts` (Alizadeh et al., SIGCOMM 2010, §3.3).

    The paper's analysis takes the flows synchronised and the RTT fixed, and counts time in
    round trips. Each window grows by one packet per RTT from (W* + 1)(1 − α/2) to W* + 1 and
    is then cut by α/2 (eqs. 2, 9; the period is D RTTs, eq. 11), so the aggregate window
    N·W(t) sweeps linearly in time from C·RTT + Q_min to C·RTT + Q_max, and the queue is
    Q(t) = N·W(t) − C·RTT (eq. 3) while that is positive. Hence:

    - mean queue: the time average of a linear sweep, (Q_max + Q_min)/2 = K + N − A/2 when
      Q_min ≥ 0; when Q_min < 0 the queue is empty for the share −Q_min/A of the cycle and
      the mean is Q_max²/(2A);
    - utilization: the link carries min(N·W, C·RTT)/RTT, so it is full while the queue is
      not empty; with Q_min < 0 the aggregate window climbs from C·RTT + Q_min to C·RTT
      carrying on average C·RTT + Q_min/2 per RTT, a loss of Q_min²/2 packet·RTTs out of the
      cycle's A·C·RTT: utilization = 1 − Q_min²/(2·A·C·RTT).

    This is the drop-tail sawtooth of `sawtooth_utilization` and `sawtooth_mean_queue_pkts`
    with a top of C·RTT + K + N and β = 1 − α/2 (their bottom is then C·RTT + Q_min, since
    A = (C·RTT + K + N)·α/2). The paper's condition for full throughput, Q_min > 0, gives
    its guideline K > C·RTT/7 (eq. 14); the fluid model of Alizadeh, Javanmard and
    Prabhakar (SIGMETRICS 2011) relaxes it to K ≳ 0.17·C·RTT.
    """
    w_star = (bdp_pkts + k_pkts) / flows
    alpha = dctcp_alpha(w_star)
    amplitude = flows * (w_star + 1) * alpha / 2
    q_max = k_pkts + flows
    beta = 1 - alpha / 2
    return DctcpCycle(
        w_star_pkts=w_star,
        alpha=alpha,
        amplitude_pkts=amplitude,
        q_max_pkts=q_max,
        q_min_pkts=q_max - amplitude,
        utilization=sawtooth_utilization(bdp_pkts, q_max, beta),
        mean_queue_pkts=sawtooth_mean_queue_pkts(bdp_pkts, q_max, beta),
    )


def red_probability(
    avg_pkts: float, min_th: float, max_th: float, max_p: float, gentle: bool = True
) -> float:
    """RED's drop (or mark) probability p_b at average queue `avg_pkts` (Floyd & Jacobson,
    "Random early detection gateways for congestion avoidance", ToN 1(4), 1993): 0 below
    min_th, max_p·(avg − min_th)/(max_th − min_th) up to max_th, then (gentle RED) from max_p
    up to 1 at 2·max_th, or 1 at once when not gentle."""
    if avg_pkts < min_th:
        return 0.0
    if avg_pkts < max_th:
        return max_p * (avg_pkts - min_th) / (max_th - min_th)
    if gentle and avg_pkts < 2 * max_th:
        return max_p + (1 - max_p) * (avg_pkts - max_th) / max_th
    return 1.0


def red_signal_rate(p_b: float) -> float:
    """The share of arrivals RED marks or drops at a steady p_b: each packet is signalled with
    p_b/(1 − count·p_b), count the packets since the last signal, which makes the gap between
    signals uniform on 1 … 1/p_b (Floyd & Jacobson 1993 §7; Linux's RED draws the gap the
    same way). The mean gap (1/p_b + 1)/2 gives 2·p_b/(1 + p_b): twice p_b while it is small,
    every packet at p_b = 1."""
    return 2 * p_b / (1 + p_b)
