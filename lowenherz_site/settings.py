"""Django settings for the Löwenherz site.

Every setting that differs between machines comes from the environment, read
through helpers that refuse bad values. The defaults are the embedded ones the
README's run command uses: SQLite, and a Celery broker on the file system that
needs no server. `DATABASE_URL` and `REDIS_URL` switch to PostgreSQL and Redis.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from kombu import Queue

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("LOWENHERZ_VAR", BASE_DIR / "var"))


def env_bool(name: str, default: bool) -> bool:
    """Read a yes/no variable, refusing anything ambiguous."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    if raw.lower() in {"1", "true", "yes", "on"}:
        return True
    if raw.lower() in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"{name} must be true or false, not {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    try:
        return default if raw is None else int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, not {raw!r}") from None


SECRET_KEY = os.environ.get("SECRET_KEY", "dev-only-not-secret-change-me-in-production")
DEBUG = env_bool("DEBUG", True)
ALLOWED_HOSTS = os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",")
SITE_URL = os.environ.get("SITE_URL", "http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "crispy_forms",
    "crispy_bootstrap5",
    "anymail",
    "games",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "games.middleware.TimezoneMiddleware",
]

ROOT_URLCONF = "lowenherz_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "lowenherz_site.wsgi.application"

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the worker write at once: take the write lock at BEGIN, and wait.
    DATABASES["default"]["OPTIONS"] = {"transaction_mode": "IMMEDIATE", "timeout": 20}

PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "lobby"
LOGOUT_REDIRECT_URL = "lobby"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CRISPY_ALLOWED_TEMPLATE_PACKS = "bootstrap5"
CRISPY_TEMPLATE_PACK = "bootstrap5"

# --- Celery: Redis when REDIS_URL is set, else a broker on the file system ---------------
REDIS_URL = os.environ.get("REDIS_URL", "")
BROKER_DIR = VAR_DIR / "broker"
# The longest a task may run (a send: several SMTP round trips of EMAIL_TIMEOUT each); a
# prefork worker kills a task past it, so a row it left half-done is known to be dead.
TASK_TIME_LIMIT_SECONDS = env_int("TASK_TIME_LIMIT_SECONDS", 120)
# The recovery pass (games.recovery): how often it runs (the beat's sweep), and how long
# a task the database says is owed may be in flight before it is queued again.
RECOVERY_INTERVAL_SECONDS = env_int("RECOVERY_INTERVAL_SECONDS", 60)
RECOVERY_GRACE_SECONDS = env_int("RECOVERY_GRACE_SECONDS", 30)
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    # A message a worker took and never acknowledged (it died) goes back to the queue
    # after this; just above the longest task, so that no running task is handed out twice.
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {
        "visibility_timeout": TASK_TIME_LIMIT_SECONDS + 30}
else:
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR),
        "data_folder_out": str(BROKER_DIR),
        "control_folder": str(VAR_DIR / "broker-control"),
        "store_processed": False,
    }
CELERY_TASK_IGNORE_RESULT = True
# The beat's work has a queue of its own, which every worker also takes from: the
# recovery pass must not wait behind the backlog it is there to recover.
CELERY_TASK_QUEUES = (Queue("celery"), Queue("sweep"))
CELERY_TASK_ROUTES = {"games.tasks.sweep": {"queue": "sweep"},
                      "games.tasks.send_digests": {"queue": "sweep"}}
CELERY_TASK_TIME_LIMIT = TASK_TIME_LIMIT_SECONDS
# Every task is acknowledged after it ran (games.tasks): a worker holds one message at a
# time, so that a crash leaves one message to redeliver, not a prefetched batch.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A task runs to its end when the broker connection drops: killing a send after the SMTP
# server's "250" would send it twice; every task is idempotent if its message comes again.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# Queuing a task when the broker is down must not hold up the person who moved: a few
# quick tries, then the failure is logged and the recovery pass queues it later.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0,
                                    "interval_step": 0.2, "interval_max": 0.5}
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_TASK_ALWAYS_EAGER = False
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# --- Email ---------------------------------------------------------------------------------
# EMAIL_URL (smtp://user:password@host:port, smtp+tls://, smtp+ssl://) or the usual Django
# variables (EMAIL_HOST, EMAIL_PORT, ...) choose an SMTP server. Without either, the
# embedded default writes every email as a file in var/mail, where the person running the
# site can read it.


def email_settings(url: str) -> dict:
    """EMAIL_URL as Django settings; refuses what it cannot understand."""
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(url)
    if parts.scheme not in {"smtp", "smtp+tls", "smtp+ssl"} or not parts.hostname:
        raise ValueError(f"EMAIL_URL must look like smtp://user:password@host:25, not {url!r}")
    return {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": parts.hostname,
        "EMAIL_PORT": parts.port or (465 if parts.scheme == "smtp+ssl" else 25),
        "EMAIL_HOST_USER": unquote(parts.username or ""),
        "EMAIL_HOST_PASSWORD": unquote(parts.password or ""),
        "EMAIL_USE_TLS": parts.scheme == "smtp+tls",
        "EMAIL_USE_SSL": parts.scheme == "smtp+ssl",
    }


EMAIL_FILE_PATH = VAR_DIR / "mail"
if os.environ.get("EMAIL_URL"):
    globals().update(email_settings(os.environ["EMAIL_URL"]))
elif os.environ.get("EMAIL_HOST"):
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST = os.environ["EMAIL_HOST"]
    EMAIL_PORT = env_int("EMAIL_PORT", 25)
    EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
else:
    EMAIL_BACKEND = os.environ.get(
        "EMAIL_BACKEND", "django.core.mail.backends.filebased.EmailBackend")
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 20)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Löwenherz <lowenherz@localhost>")
# Moves by email: replies go to play+TOKEN@REPLY_DOMAIN.
REPLY_DOMAIN = os.environ.get("REPLY_DOMAIN", "localhost")
REPLY_LOCAL_PART = os.environ.get("REPLY_LOCAL_PART", "play")
MAGIC_LINK_HOURS = env_int("MAGIC_LINK_HOURS", 72)
# Inbound webhooks authenticate with HTTP basic auth "user:password" (anymail's format).
INBOUND_SECRET = os.environ.get("INBOUND_SECRET", "lowenherz:dev-only-inbound-secret")
ANYMAIL = {"WEBHOOK_SECRET": INBOUND_SECRET}

# Celery beat: the sweeper (recovery, deadlines, reminders, outbox retries) every
# RECOVERY_INTERVAL_SECONDS; digests hourly. A sweep still queued when the next is due is
# dropped (expires): a stopped worker does not come back to a pile of them.
CELERY_BEAT_SCHEDULE = {
    "sweep": {"task": "games.tasks.sweep", "schedule": float(RECOVERY_INTERVAL_SECONDS),
              "options": {"expires": float(RECOVERY_INTERVAL_SECONDS)}},
    "digests": {"task": "games.tasks.send_digests", "schedule": 3600.0,
                "options": {"expires": 3000.0}},
}

GAME_DEFAULT_DEADLINE_HOURS = env_int("GAME_DEFAULT_DEADLINE_HOURS", 48)
