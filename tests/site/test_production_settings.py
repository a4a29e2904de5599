"""Production settings that refuse to be unsafe (issue 9, D5).

Each check runs the real settings in a fresh Python process with a chosen environment,
because settings are read once per process: what an operator gets from `gunicorn` or
`manage.py` with exactly those variables.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys

import pytest
from django.conf import settings
from django.test import RequestFactory, override_settings
from django.urls import reverse

from dev import PRODUCTION_ENV
from lowenherz_site.client_ip import client_ip
from tests.site.conftest import PASSWORD, ROOT, database_url

GOOD_SECRET = secrets.token_urlsafe(50)
GOOD_INBOUND = f"lowenherz:{secrets.token_urlsafe(24)}"

# Runs in the child: a request through the whole middleware to a page that does not
# exist, and to the login page, over "https" as a TLS proxy would say.
PROBE = """
import json, django
django.setup()
from django.conf import settings
from django.test import Client
client = Client(HTTP_HOST=settings.ALLOWED_HOSTS[0], HTTP_X_FORWARDED_PROTO="https")
missing = client.get("/no-such-page/", secure=True)
login = client.get("/accounts/login/", secure=True)
print(json.dumps({"debug": settings.DEBUG, "status": missing.status_code,
                  "body": missing.content.decode(), "headers": dict(login.headers),
                  "cookies": {k: dict(v) for k, v in login.cookies.items()}}))
"""


def run_settings(env: dict[str, str], code: str = PROBE) -> subprocess.CompletedProcess:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "SECRET_KEY", "INBOUND_SECRET", *PRODUCTION_ENV}
    }
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, "DJANGO_SETTINGS_MODULE": "lowenherz_site.settings", **env},
    )


def probe(env: dict[str, str]) -> dict:
    result = run_settings(env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({}, "SECRET_KEY"),
        ({"SECRET_KEY": settings.DEV_SECRET_KEY, "INBOUND_SECRET": GOOD_INBOUND}, "SECRET_KEY"),
        ({"SECRET_KEY": "short", "INBOUND_SECRET": GOOD_INBOUND}, "SECRET_KEY"),
        ({"SECRET_KEY": GOOD_SECRET}, "INBOUND_SECRET"),
        (
            {"SECRET_KEY": GOOD_SECRET, "INBOUND_SECRET": settings.DEV_INBOUND_SECRET},
            "INBOUND_SECRET",
        ),
        ({"SECRET_KEY": GOOD_SECRET, "INBOUND_SECRET": "lowenherz:guessable"}, "INBOUND_SECRET"),
    ],
)
def test_with_debug_off_the_site_refuses_to_start_on_a_known_or_missing_secret(variables, named):
    result = run_settings(variables)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and named in result.stderr
    assert "DEBUG is off" in result.stderr


def test_debug_is_off_unless_the_environment_turns_it_on_and_404_pages_list_no_urls():
    shown = probe({"SECRET_KEY": GOOD_SECRET, "INBOUND_SECRET": GOOD_INBOUND})
    assert shown["debug"] is False
    assert shown["status"] == 404
    assert "URLconf" not in shown["body"] and "admin/" not in shown["body"]
    assert "There is nothing at this address" in shown["body"]


def test_debug_on_by_choice_runs_on_the_development_secrets():
    assert probe({"DEBUG": "true"})["debug"] is True


def test_the_production_environment_turns_on_https_only_cookies_and_hsts():
    shown = probe({**PRODUCTION_ENV, "SECRET_KEY": GOOD_SECRET, "INBOUND_SECRET": GOOD_INBOUND})
    headers = shown["headers"]
    assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    assert shown["cookies"]["csrftoken"]["secure"] is True
    assert headers["X-Frame-Options"] == "DENY"


def test_check_deploy_fails_when_a_production_switch_is_missing():
    """The CI's `check --deploy --fail-level WARNING` (dev.py) has teeth."""
    env = {
        **PRODUCTION_ENV,
        "SECRET_KEY": GOOD_SECRET,
        "INBOUND_SECRET": GOOD_INBOUND,
        "SECURE_COOKIES": "false",
    }
    code = (
        "import django, sys; django.setup(); from django.core.management import "
        "call_command; call_command('check', deploy=True, fail_level='WARNING')"
    )
    result = run_settings(env, code)
    assert result.returncode != 0 and "security.W012" in result.stderr


# --- the README's check on .env.example (issue 21, item 10) ------------------------------------

# .env.example's values left empty, and what the operator fills in (README: "cp
# .env.example .env, then fill in the empty values"); compose.yaml sets the database's.
FILLED_IN = {
    "SECRET_KEY": GOOD_SECRET,
    "INBOUND_SECRET": GOOD_INBOUND,
    "ALLOWED_HOSTS": "games.example.org",
    "SITE_URL": "https://games.example.org",
    "POSTGRES_PASSWORD": "made0up0password",
}


def env_example() -> dict[str, str]:
    """The variables .env.example sets (its uncommented KEY=VALUE lines)."""
    lines = (ROOT / ".env.example").read_text().splitlines()
    pairs = [line.split("=", 1) for line in lines if line.strip() and not line.startswith("#")]
    return {key.strip(): value.strip() for key, value in pairs}


def test_env_example_passes_the_readmes_check_command():
    example = env_example()
    assert {k for k, v in example.items() if not v} == set(FILLED_IN)  # nothing else left out
    readme = (ROOT / "README.md").read_text()
    command = "python manage.py check --deploy --fail-level WARNING"
    assert f"On your server: `{command}`" in readme
    # The test run's own (the browser tests' DJANGO_ALLOW_ASYNC_UNSAFE) are no server's.
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "CACHE_URL", "DJANGO_ALLOW_ASYNC_UNSAFE", *example}
    }
    result = subprocess.run(
        [sys.executable, *command.split()[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, **example, **FILLED_IN, "DJANGO_SETTINGS_MODULE": "lowenherz_site.settings"},
    )
    assert result.returncode == 0, result.stderr


# --- cookies (issue 21, item 10) ---------------------------------------------------------------

# Runs in the child: a login over "https", as a TLS proxy would say; the Set-Cookie lines.
LOGIN_PROBE = """
import json, django
django.setup()
from django.conf import settings
from django.test import Client
client = Client(HTTP_HOST=settings.ALLOWED_HOSTS[0], HTTP_X_FORWARDED_PROTO="https")
answer = client.post("/accounts/login/", {"username": %r, "password": %r}, secure=True)
print(json.dumps({"status": answer.status_code,
                  "set_cookie": {k: v.output(header="") for k, v in answer.cookies.items()}}))
"""


def cookie_flags(line: str) -> set[str]:
    return {part.strip().split("=")[0].lower() for part in line.split(";")[1:]}


def test_a_login_in_production_sets_httponly_secure_cookies(transactional_db, alice):
    database = database_url(settings.DATABASES["default"])  # the tests' own, where alice is
    env = {
        **PRODUCTION_ENV,
        "SECRET_KEY": GOOD_SECRET,
        "INBOUND_SECRET": GOOD_INBOUND,
        "DATABASE_URL": database,
    }
    result = run_settings(env, LOGIN_PROBE % ("alice", PASSWORD))
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["status"] == 302  # logged in
    for name in ("sessionid", "csrftoken"):
        assert {"httponly", "secure", "samesite"} <= cookie_flags(answer["set_cookie"][name])


def test_a_login_sets_httponly_cookies_here_too(client, alice):
    """Over plain http (development, the tests) the cookies cannot be Secure; no script
    reads them all the same."""
    answer = client.post(reverse("login"), {"username": "alice", "password": PASSWORD})
    assert answer.status_code == 302
    for name in ("sessionid", "csrftoken"):
        assert "httponly" in cookie_flags(answer.cookies[name].output(header=""))


# --- Content-Security-Policy -------------------------------------------------------------------


def test_every_page_carries_a_policy_without_inline_script(client, db):
    policy = client.get("/")["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'"
    assert directives["default-src"] == "'self'"
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert directives["frame-ancestors"] == "'none'"


# --- the client's address, for rate limits ---------------------------------------------------


def request_from(remote: str, forwarded: str = ""):
    return RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)


def test_without_proxies_the_forwarded_header_is_not_believed():
    assert client_ip(request_from("203.0.113.9", "198.51.100.1")) == "203.0.113.9"


@override_settings(TRUSTED_PROXY_COUNT=1)
def test_behind_one_proxy_the_client_is_the_entry_it_appended():
    # The client wrote "1.2.3.4" itself; the proxy appended the address it saw.
    assert client_ip(request_from("10.0.0.2", "1.2.3.4, 198.51.100.7")) == "198.51.100.7"
    assert client_ip(request_from("10.0.0.2")) == "10.0.0.2"


INLINE = re.compile(r"\sstyle=|\son[a-z]+=|<script(?![^>]*\bsrc=)", re.IGNORECASE)


def test_no_page_template_has_an_inline_script_style_or_handler():
    """The policy blocks them in browsers: they would be dead (emails are not pages)."""
    pages = [path for path in (ROOT / "templates").rglob("*.html") if "emails" not in path.parts]
    assert len(pages) > 10
    offending = [
        f"{path.relative_to(ROOT)}: {found[0]}"
        for path in pages
        if (found := INLINE.search(path.read_text()))
    ]
    assert offending == []


# --- the SMTP server from the environment (issue 22, item 6) ----------------------------------

SHOW_EMAIL = """
import json, django
django.setup()
from django.conf import settings
print(json.dumps({name: getattr(settings, name, None) for name in (
    "EMAIL_BACKEND", "EMAIL_HOST", "EMAIL_PORT", "EMAIL_HOST_USER", "EMAIL_HOST_PASSWORD",
    "EMAIL_USE_TLS", "EMAIL_USE_SSL")}))
"""
SMTP = "django.core.mail.backends.smtp.EmailBackend"


def email_settings(env: dict[str, str]) -> dict:
    result = run_settings({"DEBUG": "true", **env}, SHOW_EMAIL)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"EMAIL_URL": "smtp+ssl://mail%40example.org:p%2Fss@smtp.example.org"},
            (SMTP, "smtp.example.org", 465, "mail@example.org", "p/ss", False, True),
        ),
        (
            {"EMAIL_URL": "smtp+tls://u:pw@smtp.example.org:587"},
            (SMTP, "smtp.example.org", 587, "u", "pw", True, False),
        ),
        ({"EMAIL_URL": "smtp://127.0.0.1"}, (SMTP, "127.0.0.1", 25, "", "", False, False)),
        (
            {
                "EMAIL_HOST": "relay.example.org",
                "EMAIL_PORT": "2525",
                "EMAIL_HOST_USER": "u",
                "EMAIL_HOST_PASSWORD": "pw",
                "EMAIL_USE_TLS": "true",
            },
            (SMTP, "relay.example.org", 2525, "u", "pw", True, False),
        ),
    ],
)
def test_email_url_or_email_host_name_the_smtp_server_in_djangos_settings(env, expected):
    shown = email_settings(env)
    assert tuple(shown.values()) == expected


def test_without_a_server_emails_are_files_and_a_bad_email_url_is_refused():
    assert email_settings({})["EMAIL_BACKEND"] == "django.core.mail.backends.filebased.EmailBackend"
    result = run_settings({"DEBUG": "true", "EMAIL_URL": "mail.example.org:25"}, SHOW_EMAIL)
    assert result.returncode != 0
    assert "EMAIL_URL must look like smtp://user:password@host:25" in result.stderr
