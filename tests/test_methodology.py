"""docs/methodology.md is what the code, the suites and the report cite: every section they
name exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_every_methodology_section_the_code_cites_exists() -> None:
    headings = re.findall(
        r"^#+ (\d+(?:\.\d+)?)\.? ", (ROOT / "docs/methodology.md").read_text(), re.M
    )
    sources = [*ROOT.glob("python/tcpeval/**/*.py"), *ROOT.glob("python/tcpeval/**/*.toml")]
    sources += [*ROOT.glob("python/tcpeval/**/*.j2")]
    cited = set()
    for path in sources:
        text = " ".join(path.read_text().split()).replace("# ", "")
        for match in re.finditer(r"docs/methodology\.md((?:,? ?\(?§[\d.]+\)?)+)", text):
            cited |= set(re.findall(r"§(\d+(?:\.\d+)?)", match.group(1)))
    assert cited
    assert cited <= set(headings), sorted(cited - set(headings))
