"""Write bench/latest.json's table into the README, between its bench-table marks:
`python -m bench.readme` (so that the README shows exactly the committed run)."""

from __future__ import annotations

import json
import re
import sys

from bench.core import LATEST, ROOT, Figure, table

START, END = "<!-- bench-table:", "<!-- /bench-table -->"


def rows() -> str:
    report = json.loads(LATEST.read_text())
    found = [
        Figure(d["id"], d["what"], d["measured"], d["baseline"], d["target"], d.get("unit", ""))
        for d in report["figures"]
    ]
    return f"Run of {report['date']} on {report['machine']}.\n\n{table(found)}"


def main() -> int:
    readme = ROOT / "README.md"
    text = readme.read_text()
    pattern = re.compile(re.escape(START) + r"[^\n]*\n.*?" + re.escape(END), re.S)
    head = text[text.index(START) : text.index("\n", text.index(START)) + 1]
    updated, count = pattern.subn(lambda _: f"{head}{rows()}\n{END}", text)
    if count != 1:
        print("README.md has no bench-table marks", file=sys.stderr)
        return 1
    readme.write_text(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
