"""`diagnose --verify`: the advice applied to the test connections, the TCP test run again,
and the gain it measured beside the gain the arithmetic predicted (docs/diagnose.md,
"Checking the advice").

Predictions:
- a buffer (the window setting: SO_SNDBUF and SO_RCVBUF on both ends): min(capacity, share ×
  granted buffer / RTT). The share — bytes in flight per byte of buffer the kernel granted —
  is measured, not assumed: Linux advertises a share of the receive buffer that depends on
  its skb overhead (tcp_win_from_space), and a send buffer holds unsent data beside what is
  in flight. The diagnosis's own test ran with autotuned buffers whose size neither end
  reports, so a short test pinned at SHARE_RUN_BUFFER_BYTES measures it first.
- streams: min(capacity, N × the one stream's rate).
- a congestion control: the simulator's goodput for it on the measured path (a model).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, computed_field

from tcpeval.diagnose.evidence import TCP_IP_HEADER_BYTES, Evidence, tcp_evidence
from tcpeval.diagnose.host_sysctls import SysctlChange, apply_near_sysctls
from tcpeval.diagnose.measure import Target, tcp_test
from tcpeval.diagnose.remedy import Remedies, Remedy, remedies
from tcpeval.diagnose.wording import mbps
from tcpeval.probe.driver import ProbeError
from tcpeval.result import Result

# Small enough to hold a sender below the capacity on most long paths (64 KiB per 40 ms is
# about 16 Mb/s), granted by every kernel's default rmem_max/wmem_max (208 KiB).
SHARE_RUN_BUFFER_BYTES = 64 << 10
SHARE_RUN_S = 3.0
# The share run measures the buffer's share only if its buffers held the sender (receiver
# window, send buffer or nothing left to send) at least this share of the time.
HELD = 0.5


class Check(BaseModel):
    """One remedy applied to the test connection, before and after."""

    setting: str
    value: str | int
    before_bps: float
    after_bps: float
    predicted_bps: float | None
    # How the prediction follows, or why there is none.
    basis: str
    # The smaller of the sender's send buffer and the receiver's receive buffer as granted.
    granted_buffer_bytes: int | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def measured_gain(self) -> float:
        return self.after_bps / self.before_bps if self.before_bps else float("inf")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def predicted_gain(self) -> float | None:
        if self.predicted_bps is None or not self.before_bps:
            return None
        return self.predicted_bps / self.before_bps


class ShareRun(BaseModel):
    """The short test with both ends' buffers pinned, that measures the buffer's share."""

    goodput_bps: float
    srtt_ms: float
    granted_buffer_bytes: int | None
    # The share of the time its buffers held the sender (rwnd- or sndbuf-limited, or nothing
    # left to send).
    held: float
    # Bytes in flight per byte of granted buffer; None unless its buffers held it.
    share: float | None


class Verification(BaseModel):
    checks: list[Check]
    # Remedies whose test failed, with the error.
    failed: list[str]
    host_changes: list[SysctlChange]
    not_applied: list[str]
    # Window remedies only.
    share_run: ShareRun | None


def verify(
    target: Target,
    e: Evidence,
    limit: str,
    predictions: dict[str, float],
    out: Path,
    seconds: float,
    apply_host: bool = False,
) -> Verification:
    """Applies the remedies of `limit` one at a time to a `seconds`-long TCP test."""
    plan = remedies(limit, e, predictions)
    host_changes = apply_near_sysctls(plan.host, target.wrapper) if apply_host else []
    share_run = None
    if any(r.setting == "window" for r in plan.per_connection):
        share_run = _share_run(tcp_test(target, SHARE_RUN_S, out, label="-verify-share",
                                        window=f"{SHARE_RUN_BUFFER_BYTES}B"))  # fmt: skip
    checks, failed = [], []
    for remedy in plan.per_connection:
        try:
            after = tcp_test(target, seconds, out, label=f"-verify-{remedy.setting}",
                             **{remedy.setting: remedy.value})  # fmt: skip
        except ProbeError as error:
            failed.append(f"{remedy.setting} {remedy.value}: {error}")
            continue
        granted = granted_buffer_bytes(after.summary["backend"]["details"])
        checks.append(_check(remedy, _goodput_bps(after), granted, e, share_run, predictions))
    if host_changes:
        checks.append(_host_check(host_changes, tcp_test(target, seconds, out, "-verify-host"), e))
    return Verification(
        checks=checks,
        failed=failed,
        host_changes=host_changes,
        not_applied=_not_applied(plan, apply_host),
        share_run=share_run,
    )


def _check(
    remedy: Remedy,
    after_bps: float,
    granted: int | None,
    e: Evidence,
    share_run: ShareRun | None,
    predictions: dict[str, float],
) -> Check:
    """The remedy's before, after and prediction; `granted`: the after-test's buffer."""
    before_bps = e.single.goodput_bps
    capacity = _capacity_goodput_bps(e)
    if remedy.setting == "window":
        predicted, basis = _window_prediction(granted, share_run, e.single.srtt_ms, capacity)
    elif remedy.setting == "streams":
        predicted = int(remedy.value) * before_bps
        basis = f"{remedy.value} × the one stream's {mbps(before_bps)}"
        predicted, basis = _capped(predicted, basis, capacity)
    else:
        predicted = predictions.get(str(remedy.value))
        basis = (
            "the simulator's goodput for it on the measured path (a model, not a measurement)"
            if predicted is not None
            else "no prediction: the simulator did not run it"
        )
    return Check(
        setting=remedy.setting,
        value=remedy.value,
        before_bps=before_bps,
        after_bps=after_bps,
        predicted_bps=predicted,
        basis=basis,
        granted_buffer_bytes=granted if remedy.setting == "window" else None,
    )


def _host_check(changes: list[SysctlChange], after: Result, e: Evidence) -> Check:
    """The test again with the kernel's own buffer sizing, under the new sysctls."""
    return Check(
        setting="host sysctls",
        value=", ".join(f"{c.key}={c.after}" for c in changes),
        before_bps=e.single.goodput_bps,
        after_bps=_goodput_bps(after),
        predicted_bps=None,
        basis="no prediction: autotuned buffers grow within the new limits, and the "
        "receiver does not report the size its buffer reached",
    )


def _window_prediction(
    granted: int | None, share_run: ShareRun | None, rtt_ms: float, capacity: float | None
) -> tuple[float | None, str]:
    if granted is None:
        return None, "no prediction: no end reported the buffer it was granted"
    if share_run is None or share_run.share is None:
        held = f"{share_run.held:.0%} of the time" if share_run else "not run"
        return None, (
            f"no prediction: the buffer's share is unknown, the test pinned at "
            f"{SHARE_RUN_BUFFER_BYTES >> 10} KiB was held by its buffers {held}"
        )
    share = share_run.share
    rate = share * granted * 8 / (rtt_ms / 1e3)
    basis = f"{share:.2f} × the granted {granted} B / {rtt_ms:.1f} ms"
    return _capped(rate, basis, capacity)


def _capped(rate: float, basis: str, capacity: float | None) -> tuple[float, str]:
    if capacity is None:
        return rate, f"{basis} (the capacity is unknown: not capped by it)"
    return min(rate, capacity), f"min(capacity {mbps(capacity)}, {basis})"


def _share_run(result: Result) -> ShareRun:
    """Bytes in flight per byte of granted buffer (rate × RTT / buffer) over the second half,
    when the buffers held the sender."""
    evidence = tcp_evidence(result)
    held = min(1.0, evidence.rwnd_limited + evidence.sndbuf_limited + evidence.app_limited)
    granted = granted_buffer_bytes(result.summary["backend"]["details"])
    rate_bps = evidence.steady_goodput_bps
    share = None
    if held >= HELD and granted:
        share = rate_bps / 8 * evidence.srtt_ms / 1e3 / granted
    return ShareRun(
        goodput_bps=rate_bps,
        srtt_ms=evidence.srtt_ms,
        granted_buffer_bytes=granted,
        held=held,
        share=share,
    )


def granted_buffer_bytes(details: dict[str, Any]) -> int | None:
    """The smaller of the sender's send buffer and the receiver's receive buffer, as the
    kernel granted them, from a TCP test's details (crates/probe/src/sockopt.rs, `Granted`;
    an iperf3 server reports none, so its side is left out)."""
    near, far = details["granted"], details["server_granted"]
    sender, receiver = (near, far) if details["sender"] == "client" else (far, near)
    sizes = [g["sndbuf_bytes"] for g in sender] + [g["rcvbuf_bytes"] for g in receiver]
    # An iperf3 server's streams carry zeros: not reported.
    reported = [size for size in sizes if size > 0]
    return min(reported) if reported else None


def _capacity_goodput_bps(e: Evidence) -> float | None:
    """The path's capacity as TCP goodput (less its headers); None when the UDP train did not
    measure it."""
    if not e.path.capacity_known:
        return None
    mss = e.single.mss_bytes
    return e.path.capacity_bps * mss / (mss + TCP_IP_HEADER_BYTES)


def _not_applied(plan: Remedies, apply_host: bool) -> list[str]:
    host = [
        f"{s.key} = {s.value} on the far end: it cannot be changed from here"
        if s.end == "far"
        else f"{s.key} = {s.value} on this host: only with --apply-host"
        for s in plan.host
        if s.end == "far" or not apply_host
    ]
    return [*plan.not_applied, *host]


def _goodput_bps(result: Result) -> float:
    return sum(f["goodput_mbps"] for f in result.summary["flows"]) * 1e6
