"""gunicorn.conf.py, which every `gunicorn` command of the site reads from the checkout:
its workers keep their database connection (bench `open-tabs`), unless the environment
says otherwise."""

from __future__ import annotations

import os
import runpy
from pathlib import Path
from unittest import mock

CONF = Path(__file__).resolve().parents[1] / "gunicorn.conf.py"


def test_a_web_worker_keeps_its_connection_unless_told_otherwise():
    with mock.patch.dict("os.environ", clear=True):
        runpy.run_path(str(CONF))
        assert os.environ["DATABASE_CONN_MAX_AGE"] == "60"
    with mock.patch.dict("os.environ", {"DATABASE_CONN_MAX_AGE": "0"}, clear=True):
        runpy.run_path(str(CONF))
        assert os.environ["DATABASE_CONN_MAX_AGE"] == "0"  # a pooler in front: the operator's
