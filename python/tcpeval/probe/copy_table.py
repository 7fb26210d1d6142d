"""What `tcpeval probe copy` prints: the copy's rate beside the memory-to-memory and local
disk rates measured in the same run, one row per stream with its checksum, and which rate
the copy ran closest to."""

from __future__ import annotations

from typing import Any

# Below this share of the memory-to-memory rate, the network is not what limits a copy.
NETWORK_LIMITED_SHARE = 0.8


def _mbps(bps: float | None) -> str:
    return "-" if bps is None else f"{bps / 1e6:.1f} Mb/s"


def _limit(report: dict[str, Any]) -> str | None:
    """Which rate the copy's is closest to: the network's, the local disk's, or neither."""
    memory = (report.get("memory_to_memory") or {}).get("rate_bps")
    passes = (report.get("local_disk") or {}).get("passes") or []
    disk_key = "write_bps" if report["direction"] == "get" else "read_bps"
    disk = passes[0][disk_key] if passes else None
    rate = report["rate_bps"]
    if memory and rate >= NETWORK_LIMITED_SHARE * memory:
        return f"the network limits the copy ({rate / memory:.0%} of memory to memory)"
    if disk and rate >= NETWORK_LIMITED_SHARE * disk:
        return f"the local disk limits the copy ({rate / disk:.0%} of its rate)"
    if memory:
        return (
            f"the server's disk or the hosts limit the copy ({rate / memory:.0%} of memory to"
            " memory)"
        )
    return None


def copy_lines(report: dict[str, Any]) -> list[str]:
    """The printed table: the rates, then one row per stream with its checksum."""
    arrow = "←" if report["direction"] == "get" else "→"
    state = "verified" if report["committed"] else "NOT committed"
    seconds = {key: report[f"{key}_ns"] / 1e9 for key in ("data", "sync", "verify")}
    lines = [
        f"{report['local']} {arrow} {report['remote']} on {report['server']}: "
        f"{report['size_bytes']} bytes over {report['streams']} streams, {state}",
        f"  disk to disk      {_mbps(report['rate_bps']):>14}  data {seconds['data']:.2f} s,"
        f" fsync {seconds['sync']:.2f} s, read back {seconds['verify']:.2f} s",
    ]
    memory = report.get("memory_to_memory")
    if memory:
        lines.append(
            f"  memory to memory  {_mbps(memory['rate_bps']):>14}  {memory['duration_s']:.1f} s,"
            f" {memory['streams']} streams"
        )
    for p in (report.get("local_disk") or {}).get("passes") or []:
        lines.append(
            f"  local disk        write {_mbps(p['write_bps'])}, read {_mbps(p['read_bps'])}"
            f" ({p['bytes']} bytes, {p['block_bytes']}-byte blocks)"
        )
    resumed = sum(r["resumed_bytes"] for r in report["ranges"])
    if resumed:
        lines.append(f"  resumed: {resumed} bytes were already there (verified, not sent)")
    lines.append("  stream      offset        bytes           rate  sha256")
    for r in report["ranges"]:
        arrived = "?" if r["received_bytes"] is None else r["received_bytes"]
        digest = r["received_sha256"] or r["sent_sha256"] or "-"
        lines.append(
            f"  {r['stream']:>6} {r['offset_bytes']:>11} {arrived:>12} {_mbps(r['rate_bps']):>14}"
            f"  {digest}"
        )
    limit = _limit(report) if report["committed"] else None
    lines += [f"  {limit}"] if limit else []
    lines += [f"  warning: {w}" for w in report["warnings"]]
    return lines
