"""The tests' Celery worker starts whatever the environment holds (issue 9, item 7e):
`celery` reads APP as its -A and BROKER_URL as its -b, so a machine with APP set for
something else had no worker, and every test needing one failed."""

from __future__ import annotations

import uuid

import pytest

from lowenherz_site.celery import app as celery_app
from tests.site.conftest import (
    forget_queue,
    launch_worker,
    require_postgresql,
    require_redis,
    worker_env,
)


@pytest.fixture
def redirecting_environment(monkeypatch) -> None:
    """An environment that names another Celery app, broker, config and mail server."""
    monkeypatch.setenv("APP", "no_such_project.celery")
    monkeypatch.setenv("BROKER_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("CONFIG_MODULE", "no_such_project.celeryconfig")
    monkeypatch.setenv("CELERY_WORKER_QUEUES", "somebody-elses-queue")
    monkeypatch.setenv("EMAIL_URL", "smtp://mail.example.org:587")


def test_the_worker_environment_leaves_out_what_redirects_celery(redirecting_environment, tmp_path):
    env = worker_env(tmp_path)
    assert not {"APP", "BROKER_URL", "CONFIG_MODULE", "CELERY_WORKER_QUEUES", "EMAIL_URL"} & set(
        env
    )
    assert env["LOWENHERZ_VAR"] == str(tmp_path) and "PATH" in env


def test_a_worker_starts_and_answers_with_APP_set(
    redirecting_environment, django_db_setup, tmp_path
):
    require_postgresql()
    require_redis()
    queue = f"lowenherz-test-env-{uuid.uuid4().hex[:12]}"
    worker = launch_worker(queue, worker_env(tmp_path), tmp_path / "worker.log")
    try:
        # On the test's broker (not BROKER_URL's): it answers a ping sent there.
        assert celery_app.control.ping(destination=[worker.name], timeout=10)
    finally:
        worker.stop()
        forget_queue(queue)
