"""One web process, alone, serving page views: `python -m bench.web_memory`, started by
bench.web's `web-memory` figure so that only this process's memory counts.

Reads from the environment: BENCH_DATABASE (the bench's database name), BENCH_USER (the
person signed in), BENCH_URLS (paths, space-separated, requested in turn) and
BENCH_VIEWS (comma-separated counts: after each, the resident set is noted). Prints
{"count": resident KiB, ...} as one line of JSON.
"""

from __future__ import annotations

import json
import os
import sys


def resident_kib() -> int:
    """VmRSS of this process, from /proc (Linux)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lowenherz_site.test_settings")
    os.environ.setdefault("DEBUG", "false")
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.db import connections
    from django.template import Template
    from django.test import Client
    from django.test.utils import _TestState, setup_test_environment

    connections["default"].settings_dict["NAME"] = os.environ["BENCH_DATABASE"]
    setup_test_environment(debug=False)  # the test client's host, the outbox in memory
    # ...but templates rendered as a server renders them (no copy of each context kept
    # for the test client).
    Template._render = _TestState.saved_data.template_render  # type: ignore[attr-defined]
    urls = os.environ["BENCH_URLS"].split()
    counts = sorted(int(n) for n in os.environ["BENCH_VIEWS"].split(","))
    client = Client()
    client.force_login(User.objects.get(pk=int(os.environ["BENCH_USER"])))
    found: dict[int, int] = {}
    done = 0
    for count in counts:
        while done < count:
            url = urls[done % len(urls)]
            status = client.get(url).status_code
            if status != 200:
                print(f"{url}: {status}", file=sys.stderr)
                return 1
            done += 1
        found[count] = resident_kib()
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
