"""Hand-made peers of the probe server, friendly and hostile, speaking its control protocol
(docs/probe.md: a 4-byte big-endian length, then one JSON message).

Run inside the namespace a test made (`ip netns exec NS python3 probe_peers.py MODE …`); each
mode prints one JSON object on stdout. Only the standard library, so any interpreter will do.
Sources are loopback addresses (127.a.b.c): the namespace's `lo` answers all of 127/8, so one
namespace holds clients from as many addresses and networks as a test wants.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import random
import selectors
import socket
import struct
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

DOMAIN = b"tcpeval-probe control v1"
VERSION = 1
# The frame the server's log once let through raw: a newline and a terminal escape.
INJECTION = '{"type":"x\\nclient 10.9.9.9:1: FORGED LINE \\u2026\\u001b[2J"}'


def run_threads(work: Callable[[], None], threads: int) -> None:
    """`work` in `threads` threads at once, until every one returns."""
    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def frame(message: dict[str, Any] | str) -> bytes:
    body = (message if isinstance(message, str) else json.dumps(message)).encode()
    return struct.pack(">I", len(body)) + body


def read_frame(sock: socket.socket) -> dict[str, Any]:
    header = sock.recv(4, socket.MSG_WAITALL)
    if len(header) < 4:
        raise ConnectionError("closed")
    (length,) = struct.unpack(">I", header)
    return json.loads(sock.recv(length, socket.MSG_WAITALL))


def connect(host: str, port: int, source: str | None, timeout_s: float = 10.0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    if source:
        sock.bind((source, 0))
    sock.connect((host, port))
    return sock


def login(host: str, port: int, secret: bytes, source: str | None = None) -> socket.socket:
    """An authenticated control connection, or ConnectionError saying what the server said."""
    sock = connect(host, port, source)
    hello = read_frame(sock)
    if hello.get("type") != "hello":
        sock.close()
        raise ConnectionError(json.dumps(hello))
    challenge = bytes.fromhex(hello["challenge"])
    mac = hmac.new(secret, DOMAIN + challenge, hashlib.sha256).hexdigest()
    sock.sendall(frame({"type": "auth", "version": VERSION, "mac": mac}))
    answer = read_frame(sock)
    if answer.get("type") != "welcome":
        sock.close()
        raise ConnectionError(json.dumps(answer))
    return sock


def read_secret(path: str) -> bytes:
    return Path(path).read_bytes().rstrip(b"\r\n")


def tcp_request(**changes: Any) -> dict[str, Any]:
    request = {
        "type": "start_tcp", "streams": 1, "duration_ns": 1_000_000, "bytes": None,
        "reverse": False, "cc": None, "window_bytes": None, "mss_bytes": None,
        "pacing_bps": None, "sample_interval_ns": 10_000_000,
    }  # fmt: skip
    return request | changes


def logins(args: argparse.Namespace) -> dict[str, Any]:
    """Logs in every `interval_s`, `tries` times; each login's seconds, or its error."""
    secret, times, errors = read_secret(args.secret_file), [], []
    for _ in range(args.tries):
        started = time.monotonic()
        try:
            login(args.host, args.port, secret, args.source).close()
            times.append(time.monotonic() - started)
        except (OSError, ConnectionError) as error:
            errors.append(f"{type(error).__name__}: {error}")
        time.sleep(max(0.0, args.interval_s - (time.monotonic() - started)))
    return {"times_s": times, "errors": errors}


def logins_at_once(args: argparse.Namespace) -> dict[str, Any]:
    """`count` logins held open together: how many the server welcomed."""
    secret, held, errors = read_secret(args.secret_file), [], []
    for _ in range(args.count):
        try:
            held.append(login(args.host, args.port, secret, args.source))
        except (OSError, ConnectionError) as error:
            errors.append(f"{type(error).__name__}: {error}")
    for sock in held:
        sock.close()
    return {"welcomed": len(held), "errors": errors}


def silent_threads(args: argparse.Namespace) -> dict[str, Any]:
    """`threads` threads that connect, send nothing and reconnect as soon as dropped."""
    stop = time.monotonic() + args.seconds
    counts = {"connections": 0, "dropped": 0}
    lock = threading.Lock()

    def one() -> None:
        while time.monotonic() < stop:
            try:
                sock = connect(args.host, args.port, args.source, timeout_s=1.0)
            except OSError:
                continue
            with lock:
                counts["connections"] += 1
            sock.settimeout(0.2)
            while time.monotonic() < stop:
                try:
                    if not sock.recv(4096):
                        break
                except TimeoutError:
                    continue
                except OSError:
                    break
            with lock:
                counts["dropped"] += 1
            sock.close()

    run_threads(one, args.threads)
    return counts


def flood_sources(networks: int, per_network: int) -> list[str]:
    return [f"127.0.{100 + n}.{1 + a}" for n in range(networks) for a in range(per_network)]


def held_connections(args: argparse.Namespace) -> dict[str, Any]:
    """`count` silent connections, one per source spread over `networks` /24s, each
    reopened as soon as the server drops it, for `seconds`: one thread, non-blocking."""
    sources = flood_sources(args.networks, args.count // args.networks)
    selector = selectors.DefaultSelector()
    counts = {"connections": 0, "dropped": 0}

    def open_from(source: str) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.bind((source, 0))
        sock.connect_ex((args.host, args.port))
        selector.register(sock, selectors.EVENT_READ, source)
        counts["connections"] += 1

    for source in sources:
        open_from(source)
    stop = time.monotonic() + args.seconds
    while time.monotonic() < stop:
        for key, _ in selector.select(timeout=0.1):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                alive = bool(sock.recv(4096))
            except BlockingIOError:
                alive = True
            except OSError:
                alive = False
            if not alive:
                selector.unregister(sock)
                sock.close()
                counts["dropped"] += 1
                open_from(key.data)
    return counts


def inject(args: argparse.Namespace) -> dict[str, Any]:
    """Sends the injection frame before authenticating, `times` times; the last answer."""
    answer: dict[str, Any] = {}
    body = INJECTION if not args.long else INJECTION.replace("x\\n", "x" * 65_000 + "\\n")
    for _ in range(args.times):
        sock = connect(args.host, args.port, args.source)
        read_frame(sock)
        sock.sendall(frame(body))
        try:
            answer = read_frame(sock)
        except (OSError, ConnectionError) as error:
            answer = {"error": str(error)}
        sock.close()
    return {"answer": answer}


def one_tcp_test(host: str, port: int, secret: bytes) -> socket.socket:
    """A 1 ms test; returns its control connection, still open."""
    control = login(host, port, secret)
    control.sendall(frame(tcp_request()))
    ready = read_frame(control)
    data = connect(host, ready["data_port"], None)
    data.sendall(frame({"type": "join", "token": ready["token"], "stream": 0}))
    assert read_frame(control)["type"] == "begin"
    data.sendall(b"\0" * 65536)
    data.close()
    results = read_frame(control)
    assert results["type"] == "results", results
    return control


def held_tests(args: argparse.Namespace) -> None:
    """`count` tests whose control connections stay open; prints when they are done, then
    holds them until stdin closes."""
    secret = read_secret(args.secret_file)
    started = time.monotonic()
    held = [one_tcp_test(args.host, args.port, secret) for _ in range(args.count)]
    print(json.dumps({"tests": len(held), "seconds": time.monotonic() - started}), flush=True)
    sys.stdin.read()


def join_timeout(args: argparse.Namespace) -> dict[str, Any]:
    """Asks for a test and never opens its data connection: the server's last word."""
    control = login(args.host, args.port, read_secret(args.secret_file))
    control.sendall(frame(tcp_request(streams=2)))
    ready = read_frame(control)
    started = time.monotonic()
    answer = read_frame(control)
    return {"ready": ready["type"], "answer": answer, "after_s": time.monotonic() - started}


def request(args: argparse.Namespace) -> dict[str, Any]:
    """Sends one request (JSON) after logging in: the server's answer."""
    control = login(args.host, args.port, read_secret(args.secret_file))
    control.sendall(frame(args.json))
    return {"answer": read_frame(control)}


def udp_beyond_count(args: argparse.Namespace) -> dict[str, Any]:
    """Asks for one datagram and sends `sent` distinct ones: what the server reports."""
    control = login(args.host, args.port, read_secret(args.secret_file))
    asked = {"type": "start_udp", "size_bytes": 64, "count": 1, "spacings_ns": [0]}
    control.sendall(frame(asked))
    ready = read_frame(control)
    assert read_frame(control)["type"] == "begin"
    session = bytes.fromhex(ready["token"])[:8]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for seq in range(args.sent):
        header = struct.pack(">I8sIIQ", 0x74637075, session, 0, seq, time.monotonic_ns())
        udp.sendto(header + b"\0" * 36, (args.host, ready["data_port"]))
    time.sleep(0.2)
    control.sendall(frame({"type": "stop"}))
    return {"report": read_frame(control)}


def slowloris(args: argparse.Namespace) -> dict[str, Any]:
    """`threads` connections that each send a frame a byte every 0.3 s, reconnecting when
    the server drops them."""
    stop = time.monotonic() + args.seconds
    counts = {"connections": 0, "dropped": 0}
    lock = threading.Lock()
    body = frame({"type": "auth", "version": VERSION, "mac": "00" * 32})

    def one() -> None:
        while time.monotonic() < stop:
            try:
                sock = connect(args.host, args.port, args.source, timeout_s=1.0)
                with lock:
                    counts["connections"] += 1
                for byte in body:
                    if time.monotonic() >= stop:
                        break
                    sock.sendall(bytes([byte]))
                    time.sleep(0.3)
            except OSError:
                pass
            with lock:
                counts["dropped"] += 1
            sock.close()

    run_threads(one, args.threads)
    return counts


def oversized(args: argparse.Namespace) -> dict[str, Any]:
    """Frames over every bound, until `seconds` pass: a 2 GiB length before authenticating,
    and, logged in, requests far over the server's limits. The answers, counted."""
    secret, answers = read_secret(args.secret_file), Counter()
    huge_requests = [
        tcp_request(streams=1_000_000),
        tcp_request(duration_ns=10**18),
        {"type": "start_udp", "size_bytes": 64, "count": 4_000_000_000, "spacings_ns": [0]},
        {"type": "start_rr", "request_bytes": 4_000_000_000, "response_bytes": 2**63,
         "count": 4_000_000_000, "cc": None},
    ]  # fmt: skip
    stop = time.monotonic() + args.seconds
    while time.monotonic() < stop:
        try:
            sock = connect(args.host, args.port, args.source)
            read_frame(sock)
            sock.sendall(struct.pack(">I", 2**31) + b"x" * 1000)
            answers[read_frame(sock)["type"]] += 1
            sock.close()
            for request in huge_requests:
                control = login(args.host, args.port, secret, args.source)
                control.sendall(frame(request))
                answers[read_frame(control).get("field", "no field")] += 1
                control.close()
        except (OSError, ConnectionError) as error:
            answers[type(error).__name__] += 1
        time.sleep(0.05)
    return dict(answers)


# Names and values fuzzed frames are built from: the protocol's own, and some that hurt.
FIELDS = ["type", "version", "mac", "streams", "duration_ns", "bytes", "reverse", "cc",
          "window_bytes", "mss_bytes", "pacing_bps", "sample_interval_ns", "name",
          "size_bytes", "count", "spacings_ns", "token", "stream", "resume",
          "overwrite"]  # fmt: skip
TYPES = ["auth", "start_tcp", "start_udp", "start_rr", "start_put", "start_get", "start_disk",
         "join", "stop", "sent", "held", "hello", "x\n\u001b[2J", "A" * 5000]  # fmt: skip
VALUES: list[Any] = [0, 1, -1, 2**32, 2**64, 1e308, None, True, "", "../../etc/passwd",
                     "a\nb", "\u202e", [], {}, [0] * 100, "0" * 64]  # fmt: skip


def fuzzed_body(rng: random.Random) -> bytes:
    """One frame (length header included) of a random kind."""
    kind = rng.randrange(6)
    if kind == 0:
        return frame_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(300))))
    if kind == 1:
        fields = {rng.choice(FIELDS): rng.choice(VALUES) for _ in range(rng.randrange(8))}
        return frame(json.dumps({"type": rng.choice(TYPES)} | fields))
    valid = json.dumps(rng.choice([
        {"type": "auth", "version": VERSION, "mac": "ab" * 32},
        tcp_request(),
        {"type": "start_put", "name": "f", "size_bytes": 10, "streams": 1, "overwrite": False,
         "resume": False},
        {"type": "start_udp", "size_bytes": 64, "count": 10, "spacings_ns": [1000]},
    ])).encode()  # fmt: skip
    if kind == 2:
        at = rng.randrange(len(valid))
        return frame_bytes(valid[:at] + bytes([rng.randrange(256)]) + valid[at + 1 :])
    if kind == 3:
        return frame_bytes(valid[: rng.randrange(len(valid))])
    if kind == 4:
        return struct.pack(">I", rng.choice([0, 65_537, 2**31, 2**32 - 1])) + valid
    return frame(INJECTION.replace("x\\n", "x" * rng.randrange(70_000) + "\\n"))


def frame_bytes(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def fuzz_one(
    args: argparse.Namespace, rng: random.Random, secret: bytes | None, source: str | None
) -> str:
    """Sends one fuzzed frame (after logging in if `secret`); how the server answered."""
    try:
        if secret is None:
            sock = connect(args.host, args.port, source, timeout_s=args.answer_s)
            if read_frame(sock)["type"] != "hello":
                sock.close()
                return "refused at once"
        else:
            sock = login(args.host, args.port, secret, source)
            sock.settimeout(args.answer_s)
    except (OSError, ConnectionError) as error:
        return f"no welcome ({type(error).__name__})"
    try:
        sock.sendall(fuzzed_body(rng))
        answer = read_frame(sock).get("type", "untyped")
        if answer == "ready":  # a test really started: leave it to end at its idle timeout
            return "test started"
        return answer
    except TimeoutError:
        return "hang"
    except (OSError, ConnectionError, ValueError):
        return "closed"
    finally:
        sock.close()


def fuzz(args: argparse.Namespace) -> dict[str, Any]:
    """`cases` fuzzed frames over `threads` connections at a time (a tenth of them after
    logging in), or as many as `seconds` allow; the count of each outcome."""
    secret = read_secret(args.secret_file)
    outcomes: Counter[str] = Counter()
    lock = threading.Lock()
    stop = time.monotonic() + args.seconds
    left = [args.cases]

    def one(worker: int) -> None:
        rng = random.Random(args.seed * 1000 + worker)
        # On loopback each worker can be a network of its own, within every per-source bound.
        source = f"127.0.{200 + worker}.1" if args.spread else args.source
        while time.monotonic() < stop:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            outcome = fuzz_one(args, rng, secret if rng.random() < 0.1 else None, source)
            with lock:
                outcomes[outcome] += 1

    workers = [threading.Thread(target=one, args=(i,)) for i in range(args.threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return dict(outcomes)


MODES = {
    "logins": logins,
    "logins-at-once": logins_at_once,
    "silent-threads": silent_threads,
    "held-connections": held_connections,
    "inject": inject,
    "held-tests": held_tests,
    "join-timeout": join_timeout,
    "request": request,
    "udp-beyond-count": udp_beyond_count,
    "slowloris": slowloris,
    "oversized": oversized,
    "fuzz": fuzz,
}


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--secret-file")
    parser.add_argument("--source")
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--interval-s", type=float, default=0.5)
    parser.add_argument("--threads", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--networks", type=int, default=50)
    parser.add_argument("--times", type=int, default=1)
    parser.add_argument("--long", action="store_true")
    parser.add_argument("--sent", type=int, default=1000)
    parser.add_argument("--json")
    parser.add_argument("--cases", type=int, default=1_000_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--answer-s", type=float, default=15.0)
    parser.add_argument("--spread", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse(argv)
    out = MODES[args.mode](args)
    if out is not None:
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
