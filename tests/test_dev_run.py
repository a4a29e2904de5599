"""`python3 dev.py run ADDRESS`: the environment it gives the web server and the worker,
so that every link in every email points to ADDRESS (issue 10, item 10), and on an
address others reach, secrets of its own (issue 21, item 10)."""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path

import pytest
from django.conf import settings
from py_vapid import Vapid

import dev
from dev import (
    DEFAULT_ALLOWED_HOSTS,
    DEV_SECRETS,
    RUN_FILE,
    RUN_SETTINGS,
    SECRETS_FILE,
    adopt_run_settings,
    record_run,
    recorded_run,
    run_environment,
    run_secrets,
)
from lowenherz_site.celery import WORKERS, declare_queues
from lowenherz_site.celery import app as celery_app
from lowenherz_site.settings import refuse_unsafe_secrets

HOST = "gamebox"  # the machine's hostname, as socket.gethostname() would say


@pytest.mark.parametrize(
    ("address", "site_url"),
    [
        ("127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("127.0.0.1:9000", "http://127.0.0.1:9000"),
        ("9000", "http://127.0.0.1:9000"),
        ("localhost:8123", "http://localhost:8123"),
        ("[::1]:8000", "http://[::1]:8000"),
    ],
)
def test_a_local_address_sets_site_url_and_leaves_allowed_hosts(address, site_url):
    assert run_environment(address, {}, HOST) == {"SITE_URL": site_url}


def test_another_host_is_also_allowed():
    assert run_environment("192.168.1.20:8080", {}, HOST) == {
        "SITE_URL": "http://192.168.1.20:8080",
        "ALLOWED_HOSTS": f"{DEFAULT_ALLOWED_HOSTS},192.168.1.20",
    }


@pytest.mark.parametrize("address", ["0.0.0.0:8000", "0:8000", "[::]:8000"])
def test_all_interfaces_means_the_machines_hostname(address):
    assert run_environment(address, {}, HOST) == {
        "SITE_URL": "http://gamebox:8000",
        "ALLOWED_HOSTS": f"{DEFAULT_ALLOWED_HOSTS},gamebox",
    }


def test_a_site_url_already_set_is_kept_and_its_host_allowed():
    assert run_environment(
        "192.168.1.20:8080", {"SITE_URL": "https://games.example.org"}, HOST
    ) == {"ALLOWED_HOSTS": f"{DEFAULT_ALLOWED_HOSTS},192.168.1.20,games.example.org"}
    assert run_environment("127.0.0.1:8000", {"SITE_URL": "http://localhost:8000"}, HOST) == {}


def test_allowed_hosts_already_set_are_kept_and_extended_once():
    environ = {"ALLOWED_HOSTS": "games.example.org"}
    assert (
        run_environment("10.0.0.5:8000", environ, HOST)["ALLOWED_HOSTS"]
        == "games.example.org,10.0.0.5"
    )
    assert "ALLOWED_HOSTS" not in run_environment(
        "10.0.0.5:8000", {"ALLOWED_HOSTS": "games.example.org,10.0.0.5"}, HOST
    )
    assert "ALLOWED_HOSTS" not in run_environment("10.0.0.5:8000", {"ALLOWED_HOSTS": "*"}, HOST)


def test_the_default_allowed_hosts_are_the_settings_own():
    source = (Path(__file__).parents[1] / "lowenherz_site" / "settings.py").read_text()
    assert f'env_list("ALLOWED_HOSTS", "{DEFAULT_ALLOWED_HOSTS}")' in source


# --- secrets: the published development ones only on loopback (issue 21, item 10) ------------


@pytest.mark.parametrize(
    "address", ["127.0.0.1:8000", "9000", "localhost:8123", "[::1]:8000", "127.0.0.2:8000"]
)
def test_on_loopback_the_development_secrets_do(address, tmp_path):
    assert run_secrets(address, {}, tmp_path) == ({}, "")
    assert not (tmp_path / SECRETS_FILE).exists()


@pytest.mark.parametrize(
    "address",
    [
        "192.168.1.20:8080",
        "0.0.0.0:8000",
        "0:8000",
        "[::]:8000",
        "gamebox:8000",
        "[2001:db8::1]:8000",
    ],
)
def test_served_to_others_it_makes_its_own_secrets_keeps_them_and_says_so(address, tmp_path):
    added, notice = run_secrets(address, {}, tmp_path)
    assert set(added) == {"SECRET_KEY", "INBOUND_SECRET", "VAPID_PRIVATE_KEY"}
    assert not set(added.values()) & {
        settings.DEV_SECRET_KEY,
        settings.DEV_INBOUND_SECRET,
        settings.DEV_VAPID_PRIVATE_KEY,
    }
    claims = {"sub": "mailto:a@example.org", "aud": "https://push.example.org"}
    assert Vapid.from_string(added["VAPID_PRIVATE_KEY"]).sign(claims)  # a P-256 key
    # Good enough for the settings' own refusal of weak secrets (as with DEBUG off).
    refuse_unsafe_secrets(
        added["SECRET_KEY"],
        added["INBOUND_SECRET"],
        settings.DEV_SECRET_KEY,
        settings.DEV_INBOUND_SECRET,
    )
    kept = tmp_path / SECRETS_FILE
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert notice.startswith("!" * 20) and address in notice and str(kept) in notice
    assert run_secrets(address, {}, tmp_path)[0] == added  # the same after a restart
    assert run_secrets(address, {}, tmp_path / "another")[0] != added  # each machine its own


def test_secrets_the_environment_sets_are_kept_unless_they_are_the_published_ones(tmp_path):
    mine = {
        "SECRET_KEY": "x" * 60,
        "INBOUND_SECRET": "me:" + "y" * 20,
        "VAPID_PRIVATE_KEY": dev.vapid_private_key(),
    }
    assert run_secrets("10.0.0.5:8000", mine, tmp_path) == ({}, "")
    published = {**mine, "INBOUND_SECRET": settings.DEV_INBOUND_SECRET}
    added, notice = run_secrets("10.0.0.5:8000", published, tmp_path)
    assert set(added) == {"INBOUND_SECRET"} and "INBOUND_SECRET" in notice
    assert added["INBOUND_SECRET"] != settings.DEV_INBOUND_SECRET


def test_a_secrets_file_loosened_is_tightened_and_a_broken_one_is_refused(tmp_path):
    added, _ = run_secrets("10.0.0.5:8000", {}, tmp_path)
    kept = tmp_path / SECRETS_FILE
    kept.chmod(0o644)
    assert run_secrets("10.0.0.5:8000", {}, tmp_path)[0] == added
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    kept.write_text("{not json")
    with pytest.raises(SystemExit, match="remove it"):
        run_secrets("10.0.0.5:8000", {}, tmp_path)
    assert kept.read_text() == "{not json"  # nothing overwritten


def test_the_published_secrets_are_the_settings_own():
    assert DEV_SECRETS == {
        "SECRET_KEY": settings.DEV_SECRET_KEY,
        "INBOUND_SECRET": settings.DEV_INBOUND_SECRET,
        "VAPID_PRIVATE_KEY": settings.DEV_VAPID_PRIVATE_KEY,
    }


def test_a_secrets_file_made_before_the_vapid_key_keeps_its_secrets_and_gains_one(tmp_path):
    kept = tmp_path / SECRETS_FILE
    older = {"SECRET_KEY": "x" * 60, "INBOUND_SECRET": "me:" + "y" * 20}
    kept.write_text(json.dumps(older))
    added, _ = run_secrets("10.0.0.5:8000", {}, tmp_path)
    assert {k: added[k] for k in older} == older and added["VAPID_PRIVATE_KEY"]
    assert run_secrets("10.0.0.5:8000", {}, tmp_path)[0] == added  # kept from now on


def test_dev_run_on_another_address_gives_the_site_its_own_secrets(tmp_path, monkeypatch, capsys):
    """`cmd_run` itself: what the web server and the worker would be started with."""
    environ = {k: v for k, v in os.environ.items() if k not in DEV_SECRETS}
    monkeypatch.setattr(os, "environ", {**environ, "LOWENHERZ_VAR": str(tmp_path)})
    started: list[dict[str, str]] = []
    monkeypatch.setattr(dev, "manage", lambda *args: None)
    monkeypatch.setattr(dev, "declare_queues", lambda: None)
    monkeypatch.setattr(dev, "stop_on_sigterm", lambda: None)
    monkeypatch.setattr(dev, "stop", lambda process: None)
    monkeypatch.setattr(dev, "start", lambda *args: started.append(dict(os.environ)) or Ended())
    monkeypatch.setattr(dev, "first_to_end", lambda *processes: processes[0])
    with pytest.raises(SystemExit):
        dev.cmd_run(["0.0.0.0:8000"])
    assert len(started) == 3  # the two workers (WORKERS) and the web server
    for env in started:
        assert env["SECRET_KEY"] not in DEV_SECRETS.values()
        assert env["INBOUND_SECRET"] not in DEV_SECRETS.values()
        assert json.loads((tmp_path / SECRETS_FILE).read_text())["SECRET_KEY"] == env["SECRET_KEY"]
    assert "Served beyond this machine (0.0.0.0:8000)" in capsys.readouterr().out


def test_dev_run_declares_the_queues_before_it_starts_a_worker(tmp_path, monkeypatch):
    """Two workers declaring their queues at once could break the file-system broker's
    bindings file (lowenherz_site.celery.declare_queues): dev.py declares them first."""
    monkeypatch.setattr(os, "environ", {**os.environ, "LOWENHERZ_VAR": str(tmp_path)})
    done: list[str] = []
    monkeypatch.setattr(dev, "manage", lambda *args: done.append(args[0]))
    monkeypatch.setattr(dev, "declare_queues", lambda: done.append("declare_queues"))
    monkeypatch.setattr(dev, "stop_on_sigterm", lambda: None)
    monkeypatch.setattr(dev, "stop", lambda process: None)
    monkeypatch.setattr(dev, "start", lambda *args: done.append("start") or Ended())
    monkeypatch.setattr(dev, "first_to_end", lambda *processes: processes[0])
    with pytest.raises(SystemExit):
        dev.cmd_run(["127.0.0.1:8000"])
    assert "declare_queues" in done
    assert done.index("declare_queues") < done.index("start")


def test_the_queues_declared_leave_a_worker_s_declare_nothing_to_write(tmp_path, monkeypatch):
    """After `declare_queues` on a fresh file-system broker, the bindings file names every
    queue, and the workers' own declares (WORKERS) leave it as it is: they only read it."""
    control = tmp_path / "control"
    monkeypatch.setitem(celery_app.conf, "broker_url", "filesystem://")
    folders = {"data_folder_in": str(tmp_path), "data_folder_out": str(tmp_path)}
    options = {**folders, "control_folder": str(control), "store_processed": False}
    monkeypatch.setitem(celery_app.conf, "broker_transport_options", options)
    declare_queues()
    (bindings,) = control.glob("*.exchange")
    written = bindings.read_bytes()
    assert {row[2] for row in json.loads(written)} >= {q for _, qs, _ in WORKERS for q in qs}
    with celery_app.connection_for_write() as connection:
        for _, queues, _ in WORKERS:
            for name in queues:
                celery_app.amqp.queues[name].bind(connection.default_channel).declare()
    assert bindings.read_bytes() == written


class Ended:
    """A child process that has ended well."""

    def poll(self) -> int:
        return 0


# --- manage.py by hand acts on the site dev.py run serves (issue 24, item 1) ------------------


def test_dev_run_records_what_it_serves_with_before_anything_runs(tmp_path, monkeypatch):
    """`manage.py` by hand (the README's receive_email) finds what the site got: the
    record is written before the first manage.py command (the demo's email links too)."""
    environ = {k: v for k, v in os.environ.items() if k not in {*DEV_SECRETS, *RUN_SETTINGS}}
    monkeypatch.setattr(os, "environ", {**environ, "LOWENHERZ_VAR": str(tmp_path)})
    recorded: list[dict[str, str]] = []
    monkeypatch.setattr(dev, "manage", lambda *args: recorded.append(recorded_run(tmp_path)))
    monkeypatch.setattr(dev, "declare_queues", lambda: None)
    monkeypatch.setattr(dev, "stop_on_sigterm", lambda: None)
    monkeypatch.setattr(dev, "stop", lambda process: None)
    monkeypatch.setattr(dev, "start", lambda *args: Ended())
    monkeypatch.setattr(dev, "first_to_end", lambda *processes: processes[0])
    with pytest.raises(SystemExit):
        dev.cmd_run(["0.0.0.0:8123"])
    own = json.loads((tmp_path / SECRETS_FILE).read_text())
    expected = {
        "DEBUG": "true",
        "SITE_URL": f"http://{socket.gethostname()}:8123",
        "ALLOWED_HOSTS": os.environ["ALLOWED_HOSTS"],
        **own,
    }
    assert recorded and all(each == expected for each in recorded)
    assert stat.S_IMODE((tmp_path / RUN_FILE).stat().st_mode) == 0o600


def test_manage_py_by_hand_takes_the_recorded_settings_its_own_environment_lacks(tmp_path):
    record_run({"DEBUG": "true", "SITE_URL": "http://10.0.0.5:9000", "PATH": "/bin"}, tmp_path)
    environ = {"LOWENHERZ_VAR": str(tmp_path), "SITE_URL": "http://mine:1"}
    adopt_run_settings(environ)
    assert environ == {"LOWENHERZ_VAR": str(tmp_path), "SITE_URL": "http://mine:1", "DEBUG": "true"}


def test_settings_chosen_elsewhere_take_nothing_from_the_record(tmp_path):
    """A test run, a server or `dev.py test` names its settings module: not a person at
    the checkout, so not the development run's settings."""
    record_run({"DEBUG": "true"}, tmp_path)
    environ = {"LOWENHERZ_VAR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "lowenherz_site.settings"}
    adopt_run_settings(environ)
    assert "DEBUG" not in environ


@pytest.mark.parametrize("kept", ["{not json", "[1, 2]", '{"DEBUG": 1, "OTHER": "x"}'])
def test_a_record_dev_py_did_not_write_is_not_read(tmp_path, kept):
    (tmp_path / RUN_FILE).write_text(kept)
    assert recorded_run(tmp_path) == {}
    assert recorded_run(tmp_path / "nothing-here") == {}


def test_the_record_is_made_anew_readable_by_its_owner_only(tmp_path):
    (tmp_path / RUN_FILE).write_text('{"SITE_URL": "http://old:1"}')
    (tmp_path / RUN_FILE).chmod(0o644)
    record_run({"SECRET_KEY": "k" * 60}, tmp_path)
    assert recorded_run(tmp_path) == {"SECRET_KEY": "k" * 60}
    assert stat.S_IMODE((tmp_path / RUN_FILE).stat().st_mode) == 0o600
