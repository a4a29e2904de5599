"""Settings for the test suite: the real settings, with secrets made up for this run.

The real settings refuse to start without secrets when DEBUG is off (as it is in tests).
Set in the environment before the settings are read, so that the test's own workers and
web servers (subprocesses) inherit the same ones.
"""

from __future__ import annotations

import os
import secrets
from urllib.parse import urlsplit, urlunsplit

os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
os.environ.setdefault("INBOUND_SECRET", f"lowenherz:{secrets.token_urlsafe(24)}")


def _redis_of_this_process(url: str, worker: str) -> str:
    """Under pytest-xdist, each test process (gw0, gw1, ...) gets a Redis database of its
    own: the site's cache keys (rate limits, login failures), which every test clears, and
    the queues must not be shared with the other process's tests. gw0 keeps the URL's
    database; the others count down from two below it (the benchmark's own is 13)."""
    index = int(worker.removeprefix("gw") or 0)
    if not url or index == 0:
        return url
    parts = urlsplit(url)
    database = parts.path.strip("/")
    number = int(database) if database.isdigit() else 0
    return urlunsplit(parts._replace(path=f"/{(number - 2 - index) % 16}"))


for _name in ("REDIS_URL", "CACHE_URL"):
    if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get(_name):
        os.environ[_name] = _redis_of_this_process(
            os.environ[_name], os.environ["PYTEST_XDIST_WORKER"]
        )

from lowenherz_site.settings import *  # noqa: E402, F403

if os.environ.get("PYTEST_VERSION"):  # set by pytest, and inherited by what the tests start
    from django.contrib.auth.hashers import Argon2PasswordHasher

    class QuickArgon2PasswordHasher(Argon2PasswordHasher):
        """Argon2 with the least work: the suite makes hundreds of people, and the real
        parameters cost about a second each on this machine. Its hashes are Argon2's own
        format (the parameters written in each), so a web process on the real settings, as
        the fault tests start, verifies them as any other (and hashes them again)."""

        time_cost = 1
        memory_cost = 8
        parallelism = 1

    PASSWORD_HASHERS = [
        "lowenherz_site.test_settings.QuickArgon2PasswordHasher",
        *PASSWORD_HASHERS,  # noqa: F405
    ]
