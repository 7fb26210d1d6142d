"""The `tcpeval` command (`python -m tcpeval`, and the script pyproject.toml installs).

The script imports this module only, and the command's modules when `main` runs: a sweep's
worker processes start by importing the script that started their parent (multiprocessing's
spawn and forkserver both do), and must not pay for typer, rich and every command.
"""

from __future__ import annotations

import sys

from tcpeval.interrupts import INTERRUPTED

# A binary missing from this installation is a usage problem, like bad input: exit code 2.
MISSING_BINARY = 2


def main() -> None:
    from tcpeval.probe.binary import MissingBinaryError

    try:
        from tcpeval.cli import app

        app(prog_name="tcpeval")
    except KeyboardInterrupt:  # before a command began (each says what it kept): no traceback
        sys.stderr.write("\ninterrupted\n")
        sys.exit(INTERRUPTED)
    except MissingBinaryError as error:
        # Any command that needs a binary ends here: one line saying how to get it.
        sys.stderr.write(f"error: {error}\n")
        sys.exit(MISSING_BINARY)


if __name__ == "__main__":
    main()
