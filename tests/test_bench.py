"""The benchmark suite's short version runs (issue 11): every figure is measured and
written in the shape of bench/latest.json. No timing is asserted here: the figures are
numbers for people to read; this only proves that the suite still runs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from bench import core

ROOT = Path(__file__).resolve().parents[1]
FIELDS = {"id", "what", "measured", "baseline", "ratio", "target", "met"}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        pytest.skip("the benchmarks run on PostgreSQL (python3 dev.py test sets DATABASE_URL)")
    out = tmp_path_factory.mktemp("bench") / "latest.json"
    # A Redis database of its own: the suite's workers purge their queues and the emails
    # benchmark clears the site's cache keys, which the tests around it use.
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "lowenherz_site.test_settings",
        "PYTHONPATH": str(ROOT),
        "REDIS_URL": redis_url.rsplit("/", 1)[0] + "/13",
    }
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def test_every_registered_figure_is_measured_in_the_report_s_shape(report):
    assert report["machine"] and report["date"] and report["quick"] is True
    ids = [f["id"] for f in report["figures"]]
    core.load_all()
    registered = [i for names, _ in core.REGISTRY.values() for i in names]
    assert sorted(ids) == sorted(registered) and len(ids) == len(set(ids))
    for figure in report["figures"]:
        assert set(figure) >= FIELDS, figure
        assert isinstance(figure["measured"], (int, float)) and figure["measured"] >= 0
        assert figure["met"] in (True, False, None)


def test_the_committed_report_has_the_same_figures(report):
    committed = json.loads((ROOT / "bench" / "latest.json").read_text())
    assert committed["quick"] is False, "bench/latest.json comes from a full run"
    assert sorted(f["id"] for f in committed["figures"]) == sorted(
        f["id"] for f in report["figures"]
    )


def refusal(env: dict[str, str]) -> subprocess.CompletedProcess:
    """`python -m bench` with only these of the services' variables."""
    given = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    return subprocess.run(
        [sys.executable, "-m", "bench", "--only", "none", "--out", os.devnull],
        cwd=ROOT,
        env={**given, "CACHE_URL": "", "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_suite_refuses_services_not_given_or_not_answering():
    """Issue 25: the suite runs on the DATABASE_URL and REDIS_URL it is given, or not at
    all (no default, nothing started or made elsewhere)."""
    postgres = "postgres://postgres@127.0.0.1:5432/lowenherz"
    nowhere = free_port()
    cases = {
        "DATABASE_URL must name a PostgreSQL server": {"REDIS_URL": "redis://127.0.0.1:6379/13"},
        "REDIS_URL must name a Redis database": {"DATABASE_URL": postgres},
        "no Redis answers at REDIS_URL": {
            "DATABASE_URL": os.environ.get("DATABASE_URL", postgres),
            "REDIS_URL": f"redis://127.0.0.1:{nowhere}/13",
        },
        "no PostgreSQL answers at DATABASE_URL": {
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:{nowhere}/lowenherz",
            "REDIS_URL": "redis://127.0.0.1:6379/13",
        },
    }
    for told, env in cases.items():
        done = refusal(env)
        assert done.returncode == 2 and told in done.stderr, (told, done.stderr[-2000:])


def test_a_target_is_read_as_written():
    figure = core.Figure("x", "x", measured=3, baseline=2, target="<= 1.5")
    assert figure.ratio == 1.5 and figure.met is True
    assert core.Figure("x", "x", measured=4, baseline=2, target="<= 1.5").met is False
    assert core.Figure("x", "x", measured=1, baseline=None, target=">= 0.3").met is True
    assert core.Figure("x", "x", measured=1, baseline=None, target="report").met is None
