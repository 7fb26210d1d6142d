"""What a user asks a probe for, checked once, and turned into the binary's flags.

Values are given as people write them ("30s", "64MB", "2Gbps") and parsed with
`tcpeval.units`; an error names the field and the value.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tcpeval.units import parse_duration, parse_rate, parse_size

MAX_STREAMS = 128
MIN_INTERVAL_NS = 100_000_000


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    server: str = Field(description="HOST:PORT of a `tcpeval probe serve`")

    @field_validator("server")
    @classmethod
    def _has_port(cls, value: str) -> str:
        host, sep, port = value.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError("must be HOST:PORT")
        return value


class _Authenticated(_Settings):
    """A test against a tcpeval server only, which always asks for the shared secret."""

    secret_file: str = Field(description="File with the shared secret")


class TcpSettings(_Settings):
    secret_file: str | None = Field(None, description="Shared secret; not used with iperf3")
    iperf3: bool = Field(False, description="The server is a stock `iperf3 -s`")
    streams: int = Field(1, ge=1, le=MAX_STREAMS)
    cc: str | None = None
    window: str | None = Field(None, description="SO_SNDBUF/SO_RCVBUF on both ends, e.g. 64MB")
    mss: int | None = Field(None, ge=88, le=65495)
    pacing: str | None = Field(None, description="SO_MAX_PACING_RATE per stream, e.g. 2Gbps")
    duration: str | None = Field(None, description="e.g. 30s (default 10s unless bytes is set)")
    bytes: str | None = Field(None, description="total to send, e.g. 10GB")
    reverse: bool = False
    sample_interval: str = "10ms"
    progress: bool = False
    hold_open: str = "0s"
    interval: str = Field("0s", description="Interval reports this often while it runs; 0s: none")

    @field_validator("interval")
    @classmethod
    def _interval(cls, value: str) -> str:
        # As iperf3: shorter reports would be mostly noise, and each costs the data path.
        if parse_duration(value).ns != 0 and parse_duration(value).ns < MIN_INTERVAL_NS:
            raise ValueError("must be 0s (none) or at least 100ms")
        return value

    @field_validator("window", "bytes")
    @classmethod
    def _size(cls, value: str | None) -> str | None:
        if value is not None and parse_size(value).bytes <= 0:
            raise ValueError("must be a positive size")
        return value

    @field_validator("pacing")
    @classmethod
    def _rate(cls, value: str | None) -> str | None:
        if value is not None:
            parse_rate(value)
        return value

    @field_validator("duration", "sample_interval", "hold_open")
    @classmethod
    def _duration(cls, value: str | None) -> str | None:
        if value is not None and parse_duration(value).ns < 0:
            raise ValueError("must not be negative")
        return value

    @model_validator(mode="after")
    def _one_limit(self) -> TcpSettings:
        if self.duration is not None and self.bytes is not None:
            raise ValueError("give either duration or bytes, not both")
        if parse_duration(self.sample_interval).ns < 1_000_000:
            raise ValueError("sample_interval must be at least 1ms")
        if self.secret_file is None and not self.iperf3:
            raise ValueError("secret_file is required (except against an iperf3 server)")
        return self

    def duration_ns(self) -> int | None:
        if self.bytes is not None:
            return None
        return parse_duration(self.duration or "10s").ns

    def arguments(self) -> list[str]:
        args = [self.server, "--streams", str(self.streams)]
        if self.secret_file is not None:
            args += ["--secret-file", self.secret_file]
        if self.iperf3:
            args.append("--iperf3")
        args += ["--sample-interval-ms", str(parse_duration(self.sample_interval).ns // 10**6)]
        if self.cc:
            args += ["--cc", self.cc]
        if self.window:
            args += ["--window-bytes", str(parse_size(self.window).bytes)]
        if self.mss:
            args += ["--mss-bytes", str(self.mss)]
        if self.pacing:
            args += ["--pacing-bps", str(parse_rate(self.pacing).bps)]
        if self.bytes:
            args += ["--bytes", str(parse_size(self.bytes).bytes)]
        else:
            args += ["--duration-ms", str((self.duration_ns() or 0) // 10**6)]
        if self.reverse:
            args.append("--reverse")
        if self.progress:
            args.append("--progress")
        hold_ms = parse_duration(self.hold_open).ns // 10**6
        if hold_ms:
            args += ["--hold-open-ms", str(hold_ms)]
        interval_ms = parse_duration(self.interval).ns // 10**6
        if interval_ms:
            args += ["--interval-ms", str(interval_ms)]
        return args


class CopySettings(_Authenticated):
    """A file to (or, with `get`, from) a server's root; then `tcp_duration` of memory-to-memory
    TCP with the same streams in the same direction ("0s" skips it) and both ends' disk
    rates measured with a file of `disk_size` ("0B" skips it)."""

    local: str = Field(description="The local file: sent, or written with get")
    remote: str = Field(description="The file's name under the server's root")
    get: bool = False
    streams: int = Field(1, ge=1, le=MAX_STREAMS)
    overwrite: bool = False
    resume: bool = False
    progress: bool = False
    tcp_duration: str = "5s"
    disk_size: str = "256MB"

    @field_validator("tcp_duration")
    @classmethod
    def _duration(cls, value: str) -> str:
        if parse_duration(value).ns < 0:
            raise ValueError("must not be negative")
        return value

    @field_validator("disk_size")
    @classmethod
    def _disk_size(cls, value: str) -> str:
        if parse_size(value).bytes < 0:
            raise ValueError("must not be negative")
        return value

    def arguments(self) -> list[str]:
        args = [self.server, "--secret-file", self.secret_file, "--local", self.local,
                "--remote", self.remote, "--streams", str(self.streams),
                "--disk-bytes", str(parse_size(self.disk_size).bytes)]  # fmt: skip
        flags = {
            "--get": self.get,
            "--overwrite": self.overwrite,
            "--resume": self.resume,
            "--progress": self.progress,
        }
        return args + [flag for flag, on in flags.items() if on]

    def tcp_settings(self) -> TcpSettings:
        """The memory-to-memory test the copy is compared with."""
        return TcpSettings(
            server=self.server,
            secret_file=self.secret_file,
            streams=self.streams,
            duration=self.tcp_duration,
            reverse=self.get,
        )


def spacing_range(text: str, steps: int) -> list[int]:
    """ "0us..100us" → `steps` evenly spaced values in ns; "10us,20us" → those values."""
    if ".." in text:
        low_text, high_text = text.split("..", 1)
        low, high = parse_duration(low_text).ns, parse_duration(high_text).ns
        if low < 0 or high < low:
            raise ValueError("must be LOW..HIGH with 0 ≤ LOW ≤ HIGH")
        if steps < 2 or low == high:
            return [low]
        return [round(low + (high - low) * i / (steps - 1)) for i in range(steps)]
    values = [parse_duration(part).ns for part in text.split(",")]
    if any(v < 0 for v in values):
        raise ValueError("must not be negative")
    return values


class UdpSettings(_Authenticated):
    size: int = Field(1472, ge=28, le=65507)
    count: int = Field(1000, ge=1)
    spacing: str = "0us..100us"
    steps: int = Field(11, ge=1, le=1000)

    @field_validator("spacing")
    @classmethod
    def _spacing(cls, value: str) -> str:
        spacing_range(value, 2)
        return value

    def arguments(self) -> list[str]:
        spacings = ",".join(str(s) for s in spacing_range(self.spacing, self.steps))
        return [
            self.server,
            "--secret-file",
            self.secret_file,
            "--size-bytes",
            str(self.size),
            "--count",
            str(self.count),
            "--spacings-ns",
            spacings,
        ]


class RrSettings(_Authenticated):
    request: str = "64B"
    response: str = "1MB"
    count: int = Field(100, ge=1)
    think: str = "0s"
    cc: str | None = None

    @field_validator("request", "response")
    @classmethod
    def _size(cls, value: str) -> str:
        if parse_size(value).bytes <= 0:
            raise ValueError("must be a positive size")
        return value

    @field_validator("think")
    @classmethod
    def _think(cls, value: str) -> str:
        spacing_range(value, 2)
        return value

    def arguments(self) -> list[str]:
        think = spacing_range(self.think, self.count)
        args = [
            self.server,
            "--secret-file",
            self.secret_file,
            "--request-bytes",
            str(parse_size(self.request).bytes),
            "--response-bytes",
            str(parse_size(self.response).bytes),
            "--count",
            str(self.count),
            "--think-ns",
            ",".join(str(t) for t in think),
        ]
        if self.cc:
            args += ["--cc", self.cc]
        return args


class DiskSettings(BaseModel):
    """A sequential disk test of one directory (`tcpeval-probe disk`): a local one, or the
    root of a server started with `--root`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str | None = Field(None, description="A directory on the file system to measure")
    server: str | None = Field(None, description="HOST:PORT of a server whose root to measure")
    secret_file: str | None = Field(None, description="Shared secret, with server")
    size: str = Field("4GB", description="File written and read per pass")
    block: str = Field("1MiB", description="Block size, or a comma-separated list")
    direct: bool = Field(False, description="Also measure with O_DIRECT")

    @field_validator("size")
    @classmethod
    def _size(cls, value: str) -> str:
        if parse_size(value).bytes <= 0:
            raise ValueError("must be a positive size")
        return value

    @field_validator("block")
    @classmethod
    def _blocks(cls, value: str) -> str:
        if any(parse_size(part).bytes <= 0 for part in value.split(",")):
            raise ValueError("must be positive sizes")
        return value

    @model_validator(mode="after")
    def _one_place(self) -> DiskSettings:
        if (self.path is None) == (self.server is None):
            raise ValueError("give either a path or a server, not both")
        if self.server is not None and self.secret_file is None:
            raise ValueError("secret_file is required with a server")
        return self

    def arguments(self) -> list[str]:
        blocks = ",".join(str(parse_size(part).bytes) for part in self.block.split(","))
        if self.path is not None:
            place = ["--path", self.path]
        else:
            place = ["--server", str(self.server), "--secret-file", str(self.secret_file)]
        return [
            *place, "--size-bytes", str(parse_size(self.size).bytes),
            "--block-bytes", blocks, *(["--direct"] if self.direct else []),
        ]  # fmt: skip
