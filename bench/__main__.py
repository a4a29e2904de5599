"""Run the benchmark suite: `python -m bench [--quick] [--only ID,...] [--out PATH]`.

`python3 dev.py bench` runs this as it is. The suite runs on the services it is given
and on no other: DATABASE_URL (a PostgreSQL server) and REDIS_URL (a Redis database),
both required, both checked to answer before anything is measured; it refuses clearly
otherwise, and installs, starts and creates nothing outside them. On that server it makes
a database of its own (`bench_<name>` of DATABASE_URL, made fresh, dropped at the end;
and `bench_<name>_small` beside it for the sweep's two sizes), so it never touches the
site's data; in that Redis database its workers' queues and the
site's cache keys, which it clears. It prints the README's table and writes the figures
as JSON (default bench/latest.json).
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
    refused = not_given()
    if refused:
        print(f"bench: {refused}", file=sys.stderr)
        return 2
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lowenherz_site.test_settings")
    os.environ.setdefault("DEBUG", "false")
    import django

    django.setup()
    refused = not_answering()
    if refused:
        print(f"bench: {refused}", file=sys.stderr)
        return 2
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


def not_given() -> str | None:
    """Why the services the suite was given will not do (None: they will)."""
    database, redis_url = os.environ.get("DATABASE_URL", ""), os.environ.get("REDIS_URL", "")
    if not database.startswith(("postgres://", "postgresql://")):
        return (
            "DATABASE_URL must name a PostgreSQL server (postgres://USER@HOST:PORT/NAME); "
            "the suite makes its own database bench_NAME there and drops it."
        )
    if not redis_url.startswith(("redis://", "rediss://")):
        return "REDIS_URL must name a Redis database (redis://HOST:PORT/N) the suite may empty."
    cache = os.environ.get("CACHE_URL", "")
    if cache and cache != redis_url:
        return "CACHE_URL must be unset or REDIS_URL: the suite clears the site's cache keys."
    return None


def not_answering() -> str | None:
    """Why the services at DATABASE_URL and REDIS_URL cannot be used (None: they answer)."""
    import warnings

    import redis
    from django.conf import settings
    from django.db import DatabaseError, connection

    try:  # as the suite's database is made next: on the server, not in NAME
        with warnings.catch_warnings(action="ignore"), connection._nodb_cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as error:
        return f"no PostgreSQL answers at DATABASE_URL: {error}".strip()
    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=5).ping()
    except (redis.RedisError, OSError) as error:
        return f"no Redis answers at REDIS_URL: {error}"
    return None


if __name__ == "__main__":
    sys.exit(main())
