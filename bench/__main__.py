"""Run the benchmark suite: `python -m bench [--quick] [--only ID,...] [--out PATH]`.

`python3 dev.py bench` runs this with the services it needs (PostgreSQL, Redis). The
suite makes a database of its own (`test_<name>` of DATABASE_URL, made fresh, dropped at
the end), so it never touches the site's data. It prints the README's table and writes
the figures as JSON (default bench/latest.json).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument(
        "--quick", action="store_true", help="small sizes and few repeats: proves the suite runs"
    )
    parser.add_argument("--only", default="", help="comma-separated figure ids")
    parser.add_argument("--out", default="", help="where to write the JSON report")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lowenherz_site.test_settings")
    os.environ.setdefault("DEBUG", "false")
    import django

    django.setup()
    from bench import core
    from bench.db import bench_database

    options = core.Options(quick=args.quick)
    wanted = {i for i in args.only.split(",") if i}
    core.load_all()
    found: list[core.Figure] = []
    with bench_database():
        for ids, function in core.REGISTRY.values():
            if wanted and not wanted & set(ids):
                continue
            start = time.perf_counter()
            print(f"bench: {', '.join(ids)} ...", file=sys.stderr, flush=True)
            got = [f for f in function(options) if not wanted or f.id in wanted]
            print(
                f"bench: {', '.join(ids)} took {time.perf_counter() - start:.1f} s",
                file=sys.stderr,
                flush=True,
            )
            found.extend(got)
    out = Path(args.out) if args.out else core.LATEST
    core.write(found, out, options)
    print(core.table(found))
    print(f"\n(written to {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
