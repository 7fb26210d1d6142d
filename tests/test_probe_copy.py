"""`tcpeval probe copy` on real kernel sockets, in namespaces each test makes and removes.

The server's root and the client's files are directories of the test; the namespaces share
the file system, so the test reads and flips bytes on both ends itself.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tcpeval.probe import ProbeError, probe_binary
from tcpeval.probe.cli import copy_ends
from tcpeval.probe.copy_table import copy_lines, verdict
from tcpeval.probe.driver import run_copy
from tcpeval.probe.netns import Hosts, Lab, lab, secret_file
from tcpeval.probe.settings import CopySettings

SLOW_RATE_BPS = 20_000_000
QUEUE_BYTES = 150_000
PARTIAL = ".{}.tcpeval-partial"


def in_ns(ns: str) -> list[str]:
    return ["ip", "netns", "exec", ns]


def random_file(path: Path, size_bytes: int) -> Path:
    path.write_bytes(os.urandom(size_bytes))
    return path


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    found = {name: tmp_path / name for name in ("root", "local", "outside", "out")}
    for path in found.values():
        path.mkdir()
    return found


def start_server(the_lab: Lab, hosts: Hosts, secret: Path, root: Path | None, *limits: str) -> str:
    rooted = ["--root", str(root)] if root else []
    return the_lab.server(hosts.server_ns, hosts.server_ip, secret, *rooted, *limits)


@pytest.fixture
def paired(tmp_path: Path, dirs: dict[str, Path]):
    with lab() as the_lab:
        hosts = the_lab.pair()
        secret = secret_file(tmp_path)
        server = start_server(the_lab, hosts, secret, dirs["root"])
        yield the_lab, hosts, server, secret


@pytest.fixture
def slow(tmp_path: Path, dirs: dict[str, Path]):
    """client — router — server at 20 Mb/s: a 20 MB copy takes about 8 s."""
    with lab() as the_lab:
        hosts = the_lab.routed(SLOW_RATE_BPS, QUEUE_BYTES)
        secret = secret_file(tmp_path)
        server = start_server(the_lab, hosts, secret, dirs["root"])
        yield the_lab, hosts, server, secret


def settings(server: str, secret: Path, local: Path, remote: str, **more: object) -> CopySettings:
    values = {"server": server, "secret_file": str(secret), "local": str(local), "remote": remote}
    return CopySettings(**(values | {"tcp_duration": "0s", "disk_size": "0B"} | more))


def start_copy(the_lab: Lab, hosts: Hosts, copy: CopySettings, out: Path) -> subprocess.Popen:
    """The binary itself, so the test can read its progress lines while it runs."""
    command = [*in_ns(hosts.client_ns), str(probe_binary()), "copy", *copy.arguments()]
    process = subprocess.Popen(
        [*command, "--progress", "--out", str(out)], stderr=subprocess.PIPE, text=True
    )
    the_lab.processes.append(process)
    return process


def wait_for(condition, what: str, timeout_s: float = 30.0) -> None:
    """Polls a condition the test cannot be told about (another process's file)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.05)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_multi_stream_copy_arrives_byte_identical_with_its_rates(paired, dirs) -> None:
    _, hosts, server, secret = paired
    source = random_file(dirs["local"] / "data.bin", 20_000_003)
    copy = settings(
        server, secret, source, "data.bin", streams=4, tcp_duration="1s", disk_size="8MB"
    )
    report = run_copy(copy, dirs["out"], wrapper=in_ns(hosts.client_ns))

    data = source.read_bytes()
    assert (dirs["root"] / "data.bin").read_bytes() == data
    assert sorted(p.name for p in dirs["root"].iterdir()) == ["data.bin"]
    assert report["committed"] is True
    assert report["problem"] is None
    assert report["size_bytes"] == len(data)
    assert report["streams"] == 4
    assert report["rate_bps"] > 0
    assert report["data_ns"] > 0
    assert [r["offset_bytes"] for r in report["ranges"]] == [0, 5_001_216, 10_002_432, 15_003_648]
    for r in report["ranges"]:
        piece = data[r["offset_bytes"] : r["offset_bytes"] + r["length_bytes"]]
        assert r["sent_sha256"] == r["received_sha256"] == sha256(piece)
        assert r["received_bytes"] == r["length_bytes"]
        assert r["rate_bps"] > 0
    assert report["memory_to_memory"]["rate_bps"] > 0
    assert report["memory_to_memory"]["streams"] == 4
    assert (dirs["out"] / "tcp" / "summary.json").exists()
    disk_pass = report["local_disk"]["passes"][0]
    assert disk_pass["bytes"] == 8 * 2**20  # whole 1 MiB blocks
    assert disk_pass["read_bps"] > 0
    assert report["local_disk"]["path"] == str(dirs["local"])
    assert report["server_disk"]["passes"][0]["write_bps"] > 0
    assert report["server_disk"]["path"] == "server --root"
    assert sorted(p.name for p in dirs["root"].iterdir()) == ["data.bin"]  # scratch removed
    assert sorted(p.name for p in dirs["local"].iterdir()) == ["data.bin"]  # scratch removed
    assert json.loads((dirs["out"] / "copy.json").read_text()) == report
    printed = "\n".join(copy_lines(report))
    assert "memory to memory" in printed
    assert report["ranges"][3]["sent_sha256"] in printed


def test_reverse_copy_fetches_a_file_from_the_root(paired, dirs) -> None:
    _, hosts, server, secret = paired
    data = random_file(dirs["root"] / "results.bin", 9_000_000).read_bytes()
    target = dirs["local"] / "fetched.bin"
    copy = settings(server, secret, target, "results.bin", get=True, streams=3)
    report = run_copy(copy, dirs["out"], wrapper=in_ns(hosts.client_ns))
    assert report["committed"] is True
    assert report["direction"] == "get"
    assert target.read_bytes() == data
    assert sorted(p.name for p in dirs["local"].iterdir()) == ["fetched.bin"]
    assert all(r["sent_sha256"] == r["received_sha256"] for r in report["ranges"])


def refused(hosts: Hosts, copy: CopySettings, out: Path) -> str:
    with pytest.raises(ProbeError) as error:
        run_copy(copy, out, wrapper=in_ns(hosts.client_ns))
    return str(error.value)


def test_escapes_are_refused_and_nothing_is_written_outside_root(paired, dirs) -> None:
    _, hosts, server, secret = paired
    outside, root = dirs["outside"], dirs["root"]
    (outside / "secret.txt").write_text("not for clients\n")
    (root / "out").symlink_to(outside)
    (root / "secret.txt").symlink_to(outside / "secret.txt")
    source = random_file(dirs["local"] / "x", 10_000)
    fetched = dirs["local"] / "fetched"
    attempts = {
        "../x": "has a . or .. component",
        f"{outside}/x": "is absolute",
        "out/x": "passes through a symlink",
        "x\nclient 10.9.9.9:1: FORGED": "contains a control character",
    }
    for remote, reason in attempts.items():
        message = refused(hosts, settings(server, secret, source, remote), dirs["out"])
        shown = remote.replace("\n", "\\u{a}")  # the server names it escaped
        assert message.startswith(f"server rejected name: '{shown}' {reason}"), message
    for remote in ("../outside/secret.txt", "out/secret.txt", "secret.txt"):
        message = refused(hosts, settings(server, secret, fetched, remote, get=True), dirs["out"])
        assert "server rejected name" in message, message
    # Overwriting the symlink inside the root is refused too (it exists, and is no file).
    message = refused(
        hosts, settings(server, secret, source, "secret.txt", overwrite=True), dirs["out"]
    )
    assert "exists and is not a regular file" in message
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "not for clients\n"
    assert sorted(p.name for p in root.iterdir()) == ["out", "secret.txt"]
    assert not fetched.exists()


def test_a_wrong_secret_is_refused(paired, dirs, tmp_path: Path) -> None:
    _, hosts, server, _ = paired
    stranger = secret_file(tmp_path, "stranger")
    source = random_file(dirs["local"] / "x", 1000)
    message = refused(hosts, settings(server, stranger, source, "x"), dirs["out"])
    assert "not authorised" in message
    assert list(dirs["root"].iterdir()) == []


def test_overwrite_only_when_asked(paired, dirs) -> None:
    _, hosts, server, secret = paired
    first = random_file(dirs["local"] / "first", 100_000)
    second = random_file(dirs["local"] / "second", 50_000)
    wrapper = in_ns(hosts.client_ns)
    assert run_copy(settings(server, secret, first, "f"), dirs["out"], wrapper)["committed"]
    message = refused(hosts, settings(server, secret, second, "f"), dirs["out"])
    assert message == "server rejected name: 'f' exists; ask for overwrite to replace it"
    assert (dirs["root"] / "f").read_bytes() == first.read_bytes()
    again = settings(server, secret, second, "f", overwrite=True, streams=2)
    assert run_copy(again, dirs["out"], wrapper)["committed"]
    assert (dirs["root"] / "f").read_bytes() == second.read_bytes()
    # The client's own end keeps the same rule for a get.
    get = settings(server, secret, first, "f", get=True)
    assert "local: 'first' exists" in refused(hosts, get, dirs["out"])


def test_a_server_without_root_rejects_copies(tmp_path: Path, dirs) -> None:
    with lab() as the_lab:
        hosts = the_lab.pair()
        secret = secret_file(tmp_path)
        server = start_server(the_lab, hosts, secret, root=None)
        source = random_file(dirs["local"] / "x", 1000)
        message = refused(hosts, settings(server, secret, source, "x"), dirs["out"])
        assert "this server was started without --root" in message


def big_put(slow, dirs: dict[str, Path]) -> tuple[Lab, Hosts, Path, CopySettings]:
    """A 20 MB file to put over two streams on the slow path (about 8 s), with --resume from
    the first try: only then does the server keep what arrived if it is cut short."""
    the_lab, hosts, server, secret = slow
    source = random_file(dirs["local"] / "big.bin", 20_000_000)
    copy = settings(server, secret, source, "big.bin", streams=2, resume=True)
    return the_lab, hosts, source, copy


def interrupt(the_lab: Lab, hosts: Hosts, copy: CopySettings, out: Path, sig: int) -> int:
    """Starts the copy, signals it a second into the transfer; returns its exit code."""
    process = start_copy(the_lab, hosts, copy, out)
    assert "Mb/s" in process.stderr.readline()  # the first progress line: one second in
    process.send_signal(sig)
    return process.wait(timeout=30)


def unlocked(partial: Path) -> bool:
    """True once no copy holds the partial file's lock (the server let go of it)."""
    with partial.open("rb") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def test_the_server_cuts_a_copy_at_its_duration_limit(tmp_path: Path, dirs) -> None:
    partial = dirs["root"] / PARTIAL.format("big.bin")
    with lab() as the_lab:
        hosts = the_lab.routed(SLOW_RATE_BPS, QUEUE_BYTES)
        secret = secret_file(tmp_path)
        server = start_server(the_lab, hosts, secret, dirs["root"], "--max-duration-s", "1")
        source = random_file(dirs["local"] / "big.bin", 20_000_000)  # 8 s at 20 Mb/s
        copy = settings(server, secret, source, "big.bin", streams=2)
        report = run_copy(copy, dirs["out"], in_ns(hosts.client_ns))
        # Not asked to resume: nothing stays.
        assert list(dirs["root"].iterdir()) == []
        resumable = run_copy(copy.model_copy(update={"resume": True}), dirs["out"],
                             in_ns(hosts.client_ns))  # fmt: skip
        wait_for(lambda: unlocked(partial), "the server to let go of the partial file")
    for cut in (report, resumable):
        assert cut["committed"] is False
        assert cut["problem"].startswith("incomplete: range ")
        assert cut["problem"].endswith("(cut at this server's limit of 1 s)")
    # Asked to resume: what arrived stays, and only that takes disk space (the reservation
    # of the whole file is given back): each range rounded up to a whole 4 KiB block, and one
    # block more the file system may keep for the file's extent tree (ext4 counts it).
    assert [p.name for p in dirs["root"].iterdir()] == [partial.name]
    arrived = sum(r["received_bytes"] for r in resumable["ranges"])
    assert 0 < arrived < 20_000_000
    assert partial.stat().st_blocks * 512 <= arrived + 2 * 4096 + 4096


def test_an_interrupted_copy_is_reported_incomplete_and_resumes(slow, dirs) -> None:
    the_lab, hosts, source, copy = big_put(slow, dirs)
    assert interrupt(the_lab, hosts, copy, dirs["out"], signal.SIGINT) == 130
    report = json.loads((dirs["out"] / "copy.json").read_text())
    assert report["committed"] is False
    assert report["interrupted"] is True
    assert report["problem"].startswith("incomplete: range ")
    arrived = [r["received_bytes"] for r in report["ranges"]]
    assert 0 < sum(arrived) < source.stat().st_size, report["ranges"]
    assert all(r["received_bytes"] == r["sent_bytes"] for r in report["ranges"])
    # No file at the final name; what arrived waits, hidden, for --resume.
    assert [p.name for p in dirs["root"].iterdir()] == [PARTIAL.format("big.bin")]

    resumed = resume(hosts, copy, dirs["out"])
    assert (dirs["root"] / "big.bin").read_bytes() == source.read_bytes()
    assert [p.name for p in dirs["root"].iterdir()] == ["big.bin"]
    held = [r["resumed_bytes"] for r in resumed["ranges"]]
    # All that arrived but each range's last (maybe half-written) block was not sent again.
    assert all(0 < h <= a and a - h <= 8192 for h, a in zip(held, arrived, strict=True))
    assert all(r["sent_sha256"] == r["received_sha256"] for r in resumed["ranges"])


def resume(hosts: Hosts, copy: CopySettings, out: Path) -> dict:
    """Runs `copy` again with --resume; it must finish and must not have started afresh."""
    report = run_copy(copy.model_copy(update={"resume": True}), out, in_ns(hosts.client_ns))
    assert report["committed"] is True
    assert sum(r["resumed_bytes"] for r in report["ranges"]) > 0
    return report


def test_a_killed_client_leaves_no_file_and_the_copy_resumes(slow, dirs) -> None:
    the_lab, hosts, source, copy = big_put(slow, dirs)
    interrupt(the_lab, hosts, copy, dirs["out"], signal.SIGKILL)
    partial = dirs["root"] / PARTIAL.format("big.bin")
    wait_for(lambda: unlocked(partial), "the server to let go of the partial file")
    assert [p.name for p in dirs["root"].iterdir()] == [partial.name]
    resume(hosts, copy, dirs["out"])
    assert (dirs["root"] / "big.bin").read_bytes() == source.read_bytes()


def test_a_killed_server_leaves_no_file_and_the_client_says_so(slow, dirs) -> None:
    the_lab, hosts, source, copy = big_put(slow, dirs)
    server_process = the_lab.processes[0]
    process = start_copy(the_lab, hosts, copy, dirs["out"])
    assert "Mb/s" in process.stderr.readline()
    server_process.kill()
    assert process.wait(timeout=60) == 1
    report = json.loads((dirs["out"] / "copy.json").read_text())
    assert report["committed"] is False
    assert report["problem"].startswith("no verdict from the server: ")
    # What the client sent is known; what arrived is not (the server never said).
    assert 0 < sum(r["sent_bytes"] for r in report["ranges"]) < source.stat().st_size
    assert all(r["received_bytes"] is None for r in report["ranges"])
    assert not (dirs["root"] / "big.bin").exists()


def test_an_interrupted_get_resumes_into_the_local_file(slow, dirs) -> None:
    the_lab, hosts, server, secret = slow
    data = random_file(dirs["root"] / "results.bin", 20_000_000).read_bytes()
    target = dirs["local"] / "results.bin"
    copy = settings(server, secret, target, "results.bin", get=True, streams=2)
    assert interrupt(the_lab, hosts, copy, dirs["out"], signal.SIGINT) == 130
    assert json.loads((dirs["out"] / "copy.json").read_text())["committed"] is False
    assert [p.name for p in dirs["local"].iterdir()] == [PARTIAL.format("results.bin")]
    resume(hosts, copy, dirs["out"])
    assert target.read_bytes() == data


def test_a_resume_over_a_partial_file_that_is_not_the_source_is_refused(slow, dirs) -> None:
    the_lab, hosts, source, copy = big_put(slow, dirs)
    interrupt(the_lab, hosts, copy, dirs["out"], signal.SIGINT)
    partial = dirs["root"] / PARTIAL.format("big.bin")
    with partial.open("r+b") as f:  # a second in, range 0 holds far more than 1000 bytes
        f.seek(1000)
        f.write(bytes([source.read_bytes()[1000] ^ 0xFF]))
    message = refused(hosts, copy.model_copy(update={"resume": True}), dirs["out"])
    assert message.startswith("resume: 'range 0' the partial file's first "), message
    assert message.endswith("bytes are not the source's; copy again without --resume")
    assert not (dirs["root"] / "big.bin").exists()


def test_a_byte_corrupted_on_disk_during_the_transfer_is_caught(slow, dirs) -> None:
    the_lab, hosts, source, copy = big_put(slow, dirs)
    head = source.read_bytes()[:65536]
    process = start_copy(the_lab, hosts, copy, dirs["out"])
    partial = dirs["root"] / PARTIAL.format("big.bin")

    def head_written() -> bool:
        return partial.exists() and partial.read_bytes()[:65536] == head

    wait_for(head_written, "the first 64 KiB in the partial file")
    with partial.open("r+b") as f:  # range 0 is written front to back: this byte is done
        f.seek(1000)
        f.write(bytes([head[1000] ^ 0xFF]))
    assert process.wait(timeout=60) == 1
    assert "checksum mismatch in range 0" in process.stderr.read()
    report = json.loads((dirs["out"] / "copy.json").read_text())
    assert report["committed"] is False
    assert report["problem"].startswith("checksum mismatch in range 0 (10002432 bytes at offset 0)")
    first = report["ranges"][0]
    assert first["received_bytes"] == first["length_bytes"]
    assert first["sent_sha256"] != first["received_sha256"]
    assert list(dirs["root"].iterdir()) == []


def test_source_and_destination_are_read_as_scp_reads_them(tmp_path: Path) -> None:
    assert copy_ends("a/data.bin", "10.0.0.2:in") == (
        "10.0.0.2",
        "in/data.bin",
        Path("a/data.bin"),
        False,
    )
    assert copy_ends("data.bin", "host:")[1] == "data.bin"
    assert copy_ends("data.bin", "host:.")[1] == "data.bin"
    assert copy_ends("data.bin", "host:in/")[1] == "in/data.bin"
    assert copy_ends("data.bin", "[fd00::2]:in")[:2] == ("[fd00::2]", "in/data.bin")
    # Passed on as given, for the server to refuse.
    assert copy_ends("x", "host:..")[1] == "../x"
    assert copy_ends("host:r/f.bin", str(tmp_path)) == ("host", "r/f.bin", tmp_path / "f.bin", True)
    assert copy_ends("host:f.bin", "new.bin")[2] == Path("new.bin")
    for both_or_neither in (("a", "b"), ("h:a", "h:b"), ("./h:a", "b")):
        with pytest.raises(ValueError, match="exactly one"):
            copy_ends(*both_or_neither)


def test_copy_bad_input_is_one_line_naming_the_field(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tcpeval.cli import app

    secret = str(secret_file(tmp_path))
    common = ["--secret-file", secret, "--out", str(tmp_path / "o")]
    done = CliRunner().invoke(app, ["probe", "copy", "a", "b", *common])
    assert done.exit_code == 2
    assert done.output.strip() == (
        "error: source: 'a' exactly one of SOURCE and DESTINATION must be HOST:PATH"
    )
    done = CliRunner().invoke(app, ["probe", "copy", "a", "h:d", *common, "--streams", "0"])
    assert done.exit_code == 2
    assert done.output.strip().startswith("error: streams: '0'")


def test_the_verdict_names_the_slowest_rate_the_copy_ran_near() -> None:
    def report(direction: str, rate_bps: float) -> dict:
        def disk(read_bps: float, write_bps: float) -> dict:
            return {"passes": [{"read_bps": read_bps, "write_bps": write_bps}]}

        return {
            "direction": direction,
            "rate_bps": rate_bps,
            "memory_to_memory": {"rate_bps": 10e9},
            "local_disk": disk(read_bps=8e9, write_bps=2e9),
            "server_disk": disk(read_bps=3e9, write_bps=5e9),
        }

    # A put reads here (8 Gb/s) and writes there (5 Gb/s); a get reads there (3), writes here (2).
    assert verdict(report("put", 4.5e9)).startswith("limited by the server's disk writes")
    assert verdict(report("get", 1.9e9)).startswith("limited by this host's disk writes")
    assert verdict(report("put", 1e9)).startswith("limited by the hosts")
    assert "the server's disk writes" in verdict(report("put", 1e9))
    alone = {"direction": "put", "rate_bps": 9e9, "memory_to_memory": {"rate_bps": 10e9}}
    assert verdict(alone).startswith("limited by the network: the copy ran at 90%")
    assert verdict({"direction": "put", "rate_bps": 1e9}) is None


@pytest.fixture
def small_root(dirs: dict[str, Path]) -> Iterator[Path]:
    """The root on a 16 MiB tmpfs of the test's own, unmounted whatever happens."""
    root = dirs["root"]
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(root)], check=True)
    try:
        yield root
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False)


def test_concurrent_puts_are_admitted_only_as_far_as_the_disk_holds_them(
    dirs, small_root: Path, slow
) -> None:
    # Three 10 MB puts at once on the 20 Mb/s path: all three are asked for within a fraction
    # of a second, long before the first has written much, and only one fits in 16 MiB.
    the_lab, hosts, server, secret = slow
    size_bytes = 10_000_000
    puts = []
    for name in ("a.bin", "b.bin", "c.bin"):
        source = random_file(dirs["local"] / name, size_bytes)
        (dirs["out"] / name).mkdir()
        copy = settings(server, secret, source, name, streams=2)
        puts.append(start_copy(the_lab, hosts, copy, dirs["out"] / name))
    ends = [(p.wait(timeout=120), p.stderr.read()) for p in puts]
    committed = [code for code, _ in ends if code == 0]
    refusals = [err.strip() for code, err in ends if code == 2]
    print(f"three 10 MB puts on a 16 MiB root: exit codes {[c for c, _ in ends]}; {refusals}")
    assert len(committed) == 1, ends
    assert len(refusals) == 2, ends
    # A resume of a name never copied, refused for want of room, leaves no empty file.
    late = random_file(dirs["local"] / "d.bin", size_bytes)
    late_refusal = refused(hosts, settings(server, secret, late, "d.bin", resume=True), dirs["out"])
    for refusal in [*refusals, late_refusal]:
        assert re.fullmatch(
            r"(error: )?server rejected name: '[a-d]\.bin' needs 10000000 bytes; "
            r"its file system has \d+ free",
            refusal,
        ), refusal
    (kept,) = [p.name for p in small_root.iterdir()]
    assert (small_root / kept).read_bytes() == (dirs["local"] / kept).read_bytes()


def test_stale_partial_files_are_removed_at_start_and_as_they_age(tmp_path: Path, dirs) -> None:
    root = dirs["root"]
    old = root / PARTIAL.format("old.bin")
    old.write_bytes(b"x" * 4096)
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    fresh = root / PARTIAL.format("fresh.bin")
    with lab() as the_lab:
        hosts = the_lab.pair()
        secret = secret_file(tmp_path)
        fresh.write_bytes(b"y" * 4096)
        start_server(the_lab, hosts, secret, root, "--stale-partial-s", "3")
        started = time.monotonic()
        wait_for(lambda: not old.exists(), "the sweep at start", timeout_s=2.0)
        assert fresh.exists()
        # Swept every 1.5 s: gone between 3 s and 3 + 1.5 s (and some slack) after its write.
        wait_for(lambda: not fresh.exists(), "a periodic sweep", timeout_s=6.0)
        swept_after_s = time.monotonic() - started
    print(f"the fresh partial file was swept {swept_after_s:.1f} s after the server started")
    assert swept_after_s >= 2.5
