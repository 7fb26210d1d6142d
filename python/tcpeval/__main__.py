"""The `tcpeval` command (`python -m tcpeval`, and the script pyproject.toml installs).

The script imports this module only, and the command's modules when `main` runs: a sweep's
worker processes start by importing the script that started their parent (multiprocessing's
spawn and forkserver both do), and must not pay for typer, rich and every command.
"""

from __future__ import annotations

import sys

from tcpeval.interrupts import INTERRUPTED


def main() -> None:
    try:
        from tcpeval.cli import app

        app(prog_name="tcpeval")
    except KeyboardInterrupt:  # before a command began (each says what it kept): no traceback
        sys.stderr.write("\ninterrupted\n")
        sys.exit(INTERRUPTED)


if __name__ == "__main__":
    main()
