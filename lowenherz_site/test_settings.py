"""Settings for the test suite: the real settings, with secrets made up for this run.

The real settings refuse to start without secrets when DEBUG is off (as it is in tests).
Set in the environment before the settings are read, so that the test's own workers and
web servers (subprocesses) inherit the same ones.
"""

from __future__ import annotations

import os
import secrets

os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
os.environ.setdefault("INBOUND_SECRET", f"lowenherz:{secrets.token_urlsafe(24)}")

from lowenherz_site.settings import *  # noqa: F403
