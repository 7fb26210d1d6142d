"""`python -m tcpeval` is the `tcpeval` command."""

from __future__ import annotations

from tcpeval.cli import app

app(prog_name="tcpeval")
