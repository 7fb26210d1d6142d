"""The self-check's rules on the emulator's statistics: each tolerance holds at its edge and
fails past it (the numbers are what `tcpeval-lab` writes; see docs/lab.md)."""

from __future__ import annotations

import math

import pandas as pd

from tcpeval.lab import checks
from tcpeval.probe.driver import ssthresh_reading

RATE_BPS = 100_000_000


def direction(**changes: object) -> dict:
    base = {
        "arrived_pkts": 100_000,
        "induced_drops": 0,
        "random_drops": 0,
        "queue_drops": 40,
        "aqm_drops": 0,
        "aqm_marks": 0,
        "sent_ce_pkts": 0,
        "policer_drops": 0,
        "black_hole_drops": 0,
        "reordered_pkts": 0,
        "sent_pkts": 99_960,
        "held_at_end_pkts": 0,
        "ring_drops": 0,
        "tx_errors": 0,
        "pool_drops": 0,
        "gso_frames": 0,
        "backlogged": {"bytes": 125_000_000, "ns": 10_000_000_000, "pkts": 83_000},
        "lateness_ns": {"count": 10, "p999": 5_000, "max": 5_000},
        "endpoints": [
            {"ip": "10.201.1.1", "asked_delay_ns": 20_000_000,
             "added_delay_ns": {"count": 10, "p99": 20_000_100}},
        ],
    }  # fmt: skip
    return base | changes


def test_the_rate_is_judged_within_two_percent_while_backlogged():
    ok = checks.rate(direction(), RATE_BPS, "forward")
    assert ok is not None
    assert ok.ok
    slow = {"bytes": int(125_000_000 * 0.97), "ns": 10_000_000_000, "pkts": 1}
    missed = checks.rate(direction(backlogged=slow), RATE_BPS, "forward")
    assert missed is not None
    assert not missed.ok
    assert "forward rate" in missed.failure()


def test_too_little_backlog_is_not_judged():
    idle = {"bytes": 1000, "ns": 1_000_000, "pkts": 1}
    check = checks.rate(direction(backlogged=idle), RATE_BPS, "forward")
    assert check is not None
    assert check.ok
    assert "too little" in check.note


def test_delay_p99_may_exceed_the_asked_by_half_a_millisecond():
    assert all(c.ok for c in checks.delays(direction(), "forward"))
    late = direction()
    late["endpoints"][0]["added_delay_ns"]["p99"] = 20_600_000
    assert not checks.delays(late, "forward")[0].ok


def test_p999_lateness_is_bounded_by_two_percent_of_the_smallest_rtt():
    assert checks.lateness(direction(), 40_000_000, "forward").ok
    late = direction(lateness_ns={"count": 10_000, "p999": 900_000, "max": 900_000})
    assert not checks.lateness(late, 40_000_000, "forward").ok


def test_one_stall_is_stated_but_does_not_void_the_run():
    stalled = direction(lateness_ns={"count": 10_000, "p999": 40_000, "max": 9_400_000})
    check = checks.lateness(stalled, 40_000_000, "forward")
    assert check.ok
    assert "worst 9.40 ms" in check.note


def test_bernoulli_loss_is_judged_against_its_binomial_interval():
    p, offered = 1e-3, 100_000
    half = checks.Z_99 * math.sqrt(offered * p * (1 - p))
    inside = direction(random_drops=round(offered * p + half * 0.9))
    outside = direction(random_drops=round(offered * p + half * 1.2))
    loss = {"model": "bernoulli", "p": p}
    assert checks.random_loss(inside, loss, "forward").ok
    assert not checks.random_loss(outside, loss, "forward").ok


def test_any_drop_of_the_emulator_or_the_kernel_voids_the_run():
    stats = {"forward": direction(), "reverse": direction()}
    assert checks.own_drops(stats, {"kernel backlog": 0}).ok
    stats["reverse"] = direction(ring_drops=1)
    assert not checks.own_drops(stats, {"kernel backlog": 0}).ok
    assert not checks.own_drops({"forward": direction(), "reverse": direction()},
                                {"veth tl1s0": 2}).ok  # fmt: skip


def test_retransmissions_must_match_the_drops():
    assert checks.retransmits(direction(), 42, checks.PathShape()).ok
    assert not checks.retransmits(direction(), 30, checks.PathShape()).ok
    assert not checks.retransmits(direction(), 60, checks.PathShape()).ok


def test_on_a_reordering_path_only_too_few_retransmissions_fail():
    # 40 drops, slack 5: spurious resends of overtaken segments are the path's, not a fault.
    reorders = checks.PathShape(reorders=True)
    assert checks.retransmits(direction(), 60, reorders).ok
    assert not checks.retransmits(direction(), 30, reorders).ok
    behind_hole = checks.retransmits(
        direction(black_hole_drops=500), 3, checks.PathShape(black_hole=True)
    )
    assert behind_hole.ok
    assert behind_hole.asked == 540


def test_reordering_is_expected_only_when_asked_and_the_held_back_share_is_judged():
    assert not checks.reordering(3, asked=False).ok
    assert checks.reordering(3, asked=True).ok
    assert checks.held_back(direction(), None) is None
    reorder = {"share": 0.01, "delay_ns": 2_000_000}
    # 99,960 packets at 1%: 999.6 ± 2.576·√(99,960·0.01·0.99) ≈ ± 81.
    assert checks.held_back(direction(reordered_pkts=1_070), reorder).ok
    assert not checks.held_back(direction(reordered_pkts=1_090), reorder).ok
    assert not checks.held_back(direction(reordered_pkts=0), reorder).ok


def test_induced_losses_are_drops_the_retransmissions_must_repair():
    # Two induced drops and no other: each costs one retransmission, within max(5, 5%).
    induced = direction(queue_drops=0, induced_drops=2)
    check = checks.retransmits(induced, 2, checks.PathShape())
    assert (check.ok, check.asked) == (True, 2)
    assert checks.bottleneck_drops(direction(induced_drops=2)) == 42
    assert not checks.retransmits(
        direction(queue_drops=0, induced_drops=20), 2, checks.PathShape()
    ).ok


def test_the_marks_sent_must_each_reach_the_receiving_kernel():
    stats = {"forward": direction(aqm_marks=120, sent_ce_pkts=118), "reverse": direction()}
    # Two marked packets were still held when the run ended: neither sent nor expected.
    check = checks.marks(stats, {"forward": 118, "reverse": 0})
    assert check.ok, check
    assert check.asked == {"forward": 118, "reverse": 0}
    assert check.note == "the AQM marked forward 120"
    # One mark lost on the way, or one CE the emulator did not make: invalid.
    for received in ({"forward": 117, "reverse": 0}, {"forward": 118, "reverse": 1}):
        missed = checks.marks(stats, received)
        assert not missed.ok
        assert missed.failure().startswith("marks: measured")
    # Nothing marked, nothing received: valid, and said without a note.
    quiet = checks.marks({"forward": direction(), "reverse": direction()},
                         {"forward": 0, "reverse": 0})  # fmt: skip
    assert quiet.ok
    assert quiet.note == ""


def test_settings_that_did_not_read_back_are_named():
    check = checks.settings({"flow 0 cc": "cubic"}, {"flow 0 cc": "bbr"})
    assert not check.ok
    assert check.measured == {"flow 0 cc": "bbr"}


def test_the_verdict_names_every_failure():
    valid, reason, records = checks.verdict(
        [
            checks.retransmits(direction(), 100, checks.PathShape()),
            checks.settings({"a": 1}, {"a": 1}),
        ]
    )
    assert not valid
    assert reason is not None
    assert reason.startswith("retransmissions vs forward drops")
    assert len(records) == 2


def test_a_bpf_call_the_kernel_skipped_voids_the_run():
    counted = {"calls": 10, "run_ns": 500, "recursion_misses": 0}
    clean = {"tl1aimd": {"aimd_ssthresh": counted, "aimd_cong_avoid": counted}}
    assert checks.skipped_calls(clean).ok
    skipped = {"tl1aimd": {"aimd_ssthresh": counted | {"recursion_misses": 2}}}
    check = checks.skipped_calls(skipped)
    assert not check.ok
    assert check.measured == {"tl1aimd.aimd_ssthresh": 2}
    assert checks.skipped_calls({}) is None


def test_an_ssthresh_no_stack_sets_voids_the_run_when_it_outlives_an_ack():
    unset, unknown = math.inf, math.nan

    def samples(ssthresh: list[float], delivered: list[float]) -> pd.DataFrame:
        return pd.DataFrame({"flow": 0, "ssthresh_pkts": ssthresh, "delivered_pkts": delivered})

    sane = samples([unset, 120.0, 60.0], [10, 20, 30])
    assert checks.unset_ssthresh([sane]).ok
    # Seen once, then answered: the kernel's word between its call and the stack's next ACK.
    answered = samples([unset, unknown, 60.0], [10, 20, 30])
    assert checks.unset_ssthresh([sane, answered]).ok
    # Still there after more data was delivered: no stack replaced it.
    kept = samples([unset, unknown, unknown, unknown], [10, 20, 30, 40])
    check = checks.unset_ssthresh([sane, kept])
    assert not check.ok
    assert check.measured == 2
    # Still there with nothing delivered in between (a timeout's wait): no ACK to answer on.
    assert checks.unset_ssthresh([samples([unset, unknown, unknown], [10, 20, 20])]).ok


def test_the_samples_read_an_ssthresh_no_stack_sets_as_unknown():
    kernel = pd.Series([10.0, 0x7FFFFFFF, 0x82254425])
    read = ssthresh_reading(kernel)
    assert read[0] == 10.0
    assert read[1] == math.inf
    assert math.isnan(read[2])
