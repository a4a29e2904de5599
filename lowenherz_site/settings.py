"""Django settings for the Löwenherz site.

Every setting that differs between machines comes from the environment, read
through helpers that refuse bad values. The defaults are the embedded ones the
README's run command uses: SQLite, and a Celery broker on the file system that
needs no server. `DATABASE_URL` and `REDIS_URL` switch to PostgreSQL and Redis.
"""

from __future__ import annotations

import os
from datetime import timedelta
from email.utils import parseaddr
from pathlib import Path
from typing import NamedTuple

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


def refuse_unsafe_secrets(secret_key: str, inbound: str, *development: str) -> None:
    """With DEBUG off the site serves people: it must not start on a secret anyone knows."""
    from django.core.exceptions import ImproperlyConfigured

    how = 'generate one: python3 -c "import secrets; print(secrets.token_urlsafe(50))"'
    if not secret_key or secret_key in development or len(secret_key) < 50:
        raise ImproperlyConfigured(
            f"SECRET_KEY is missing, short or the development default, and DEBUG is off: {how}"
        )
    user, _, password = inbound.partition(":")
    if not inbound or inbound in development or not user or len(password) < 16:
        raise ImproperlyConfigured(
            "INBOUND_SECRET is missing or the development default, and DEBUG is off: set it "
            f'to "user:password" with a password of 16 characters or more ({how})'
        )


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    try:
        return default if raw is None else int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, not {raw!r}") from None


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    try:
        return default if raw is None else float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, not {raw!r}") from None


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_admins(name: str) -> list[tuple[str, str]]:
    """A list of "Name <address>" or bare addresses, comma-separated, as Django's ADMINS
    (name, address); refuses an entry that is not an address."""
    from email.utils import getaddresses

    raw = os.environ.get(name, "")
    admins = [(person, address) for person, address in getaddresses([raw]) if person or address]
    bad = [address or person for person, address in admins if "@" not in address]
    if bad:
        raise ValueError(
            f"{name} must be email addresses, comma-separated "
            f"(e.g. Ops <ops@example.org>), not {bad[0]!r}"
        )
    return admins


# DEBUG is off unless the environment turns it on (`python3 dev.py run` does): a server
# started without it shows no debug pages and refuses to run on the development secrets.
DEBUG = env_bool("DEBUG", False)
DEV_SECRET_KEY = "dev-only-not-secret-change-me-in-production"
DEV_INBOUND_SECRET = "lowenherz:dev-only-inbound-secret"
SECRET_KEY = os.environ.get("SECRET_KEY") or (DEV_SECRET_KEY if DEBUG else "")
# Inbound webhooks authenticate with HTTP basic auth "user:password" (anymail's format).
INBOUND_SECRET = os.environ.get("INBOUND_SECRET") or (DEV_INBOUND_SECRET if DEBUG else "")
if not DEBUG:
    refuse_unsafe_secrets(SECRET_KEY, INBOUND_SECRET, DEV_SECRET_KEY, DEV_INBOUND_SECRET)
# Web Push (games.mail.push): the VAPID key that signs the site's pushes, a P-256 private
# key as 32 bytes in base64url (dev.py makes one; `python3 dev.py vapid` prints a new
# one). Without it, push notifications are not offered. The published development key
# only with DEBUG on: anyone could push to the site's subscribers with it.
DEV_VAPID_PRIVATE_KEY = "76UzV6fr8vfIrTF5tADdoasxL1CVGJ-f7B3j5dADhj4"
VAPID_PRIVATE_KEY = os.environ.get("VAPID_PRIVATE_KEY") or (DEV_VAPID_PRIVATE_KEY if DEBUG else "")
if not DEBUG and VAPID_PRIVATE_KEY == DEV_VAPID_PRIVATE_KEY:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(
        "VAPID_PRIVATE_KEY is the development default, and DEBUG is off: make one "
        "(python3 dev.py vapid) or leave it unset to offer no push notifications"
    )
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
SITE_URL = os.environ.get("SITE_URL", "http://127.0.0.1:8000").rstrip("/")

# --- HTTPS and the proxy in front (see the README's production environment) --------------
# Behind a TLS proxy that sets X-Forwarded-Proto: trust it to say the request was https.
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
# /healthz answers the load balancer over plain HTTP inside the private network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
# How many proxies in front append to X-Forwarded-For: the client's address, for rate
# limits, is that many entries from its right end (0: the connection's own address).
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# No address of this site goes to another: the links in emails carry secrets in their
# paths (/m/<signed>/, /unsubscribe/<signed>/, ?s=), and a page opened by one must not
# hand it on. Not "no-referrer": a form's POST would then say "Origin: null", which
# Django's CSRF check refuses, and the landing pages of those links are forms.
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# No script reads either cookie (games/static: none asks for one).
SESSION_COOKIE_HTTPONLY = CSRF_COOKIE_HTTPONLY = True

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
    "axes",
    "csp",
    "django_ratelimit",
    "games",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",  # a visitor's: the cookie, Accept-Language
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # The polls of open pages, answered here: they need nothing below (games.views.live).
    "games.views.live.QuickPollMiddleware",
    "games.middleware.TimezoneMiddleware",
    "games.middleware.LanguageMiddleware",  # a signed-in person's: their preference
    # After sessions, authentication and messages, which it needs: a session a magic link
    # opened reaches only that link's game.
    "games.middleware.MagicScopeMiddleware",
    "django_ratelimit.middleware.RatelimitMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its answer.
    "axes.middleware.AxesMiddleware",
]

# django-axes first: it refuses a login for an account or address locked out by failures.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "lowenherz_site.urls"
# Django's database sessions, read with one statement written out (lowenherz_site.sessions).
SESSION_ENGINE = "lowenherz_site.sessions"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "games.context_processors.live",
            ],
            # {% url %} reversing each URL once per process (games.reversing).
            "builtins": ["games.templatetags.cached_url"],
        },
    },
]

WSGI_APPLICATION = "lowenherz_site.wsgi.application"

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),  # gunicorn's: gunicorn.conf.py
        # A kept connection a database restart cut is opened again, not an error.
        conn_health_checks=True,
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

# Open pages ask the site this often whether what they show changed (games.views.live).
LIVE_POLL_SECONDS = env_int("LIVE_POLL_SECONDS", 12)
# The leaderboard lists people with at least this many rated games (games.views.people).
LEADERBOARD_MIN_GAMES = env_int("LEADERBOARD_MIN_GAMES", 5)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "lobby"
LOGOUT_REDIRECT_URL = "lobby"

# The site speaks each person's language (their profile's; a visitor's from the cookie
# the switcher sets, else Accept-Language). Each is named in itself, for the switcher.
LANGUAGE_CODE = "en-gb"
LANGUAGES = [("en-gb", "English"), ("de", "Deutsch"), ("it", "Italiano")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- The shared cache: rate limits and login failures ---------------------------------------
# Every process must count against the same numbers: Redis when there is one (CACHE_URL,
# else REDIS_URL), else files in $LOWENHERZ_VAR/cache, which the processes of one machine
# share (the embedded default of `dev.py run`).
CACHE_URL = os.environ.get("CACHE_URL") or os.environ.get("REDIS_URL", "")
if CACHE_URL:
    # django-redis: its increment is atomic and keeps the key's expiry (Django's own
    # RedisCache checks and increments in two steps, which can leave a count forever).
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": "lowenherz",
        }
    }
    SILENCED_SYSTEM_CHECKS: list[str] = []
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }
    # Files count without atomic increments: a limit may let a few more through under a
    # race, which is fine for one machine's development server, never for production.
    SILENCED_SYSTEM_CHECKS = ["django_ratelimit.E003", "django_ratelimit.W001", "axes.W001"]
# HSTS preloading is the operator's choice, and hard to take back: once they said "no"
# (SECURE_HSTS_PRELOAD=false, as .env.example does), `check --deploy` stops asking.
if os.environ.get("SECURE_HSTS_PRELOAD") is not None and not SECURE_HSTS_PRELOAD:
    SILENCED_SYSTEM_CHECKS.append("security.W021")

# django-axes: failed logins counted per account and address together, and per address
# over all accounts; after AXES_FAILURE_LIMIT of either, logins are refused for the
# cool-off, even with the right password. Never per account alone: strangers' failures
# from their own addresses must not lock its owner out (issue 21); a guesser spread over
# many addresses gets AXES_FAILURE_LIMIT tries from each, against passwords the
# validators below keep out of guessing range. A success resets its pair's and its
# address's counts; a completed password reset does too (games.views.accounts).
AXES_HANDLER = "axes.handlers.cache.AxesCacheHandler"
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "errors/locked_out.html"
AXES_CLIENT_IP_CALLABLE = "lowenherz_site.client_ip.client_ip"
AXES_VERBOSE = False

# django-ratelimit: the limits are on the views (games.limits); a request over one gets
# HTTP 429 with a page that says when to try again.
RATELIMIT_IP_META_KEY = "lowenherz_site.client_ip.client_ip"
# Every limit of games.limits, "count/period" (s, m, h, d); RATE_LIMIT_<NAME> overrides one.
RATE_LIMITS = {
    name: os.environ.get(f"RATE_LIMIT_{name.upper()}", default)
    for name, default in {
        "signup": "10/h",  # accounts made from one address
        "password_reset": "5/h",  # reset emails asked for, per address and per email address
        "invitation": "30/d",  # invitations one person sends, over all games
        "refusal": "20/d",  # refusal emails to one registered address
        "inbound": "60/h",  # emails handled per player (a live token of their seat),
        # or per origin (any other: the server that handed it over)
        "reply_dropped": "1/d",  # "your reply was dropped" notices to one player
        "message": "30/h",  # messages one person writes to tables, over all games
        "email_change": "5/d",  # changes of email one person asks for (each mails two)
        "record_import": "20/h",  # record files one person imports (each a replay)
    }.items()
}
RATELIMIT_VIEW = "lowenherz_site.errors.rate_limited"

# django-csp: scripts and styles only from this site (no inline script, no CDN).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

CRISPY_ALLOWED_TEMPLATE_PACKS = "bootstrap5"
CRISPY_TEMPLATE_PACK = "bootstrap5"

# --- Celery: Redis when REDIS_URL is set, else a broker on the file system ---------------
REDIS_URL = os.environ.get("REDIS_URL", "")
BROKER_DIR = VAR_DIR / "broker"
# The longest a task may run (a send: several SMTP round trips of EMAIL_TIMEOUT each); a
# prefork worker kills a task past it, so a row it left half-done is known to be dead.
TASK_TIME_LIMIT_SECONDS = env_int("TASK_TIME_LIMIT_SECONDS", 120)
# A computers' task (games.tasks.play_computer) is stopped after this long: its stretch is
# rolled back and the recovery pass queues it again later; no decision holds a worker
# process longer (issue 26: slower computer players think within a budget well below it).
# By default 30 s, or half the limit of every task where that is shorter.
COMPUTER_TIME_LIMIT_SECONDS = env_int(
    "COMPUTER_TIME_LIMIT_SECONDS", min(30, TASK_TIME_LIMIT_SECONDS // 2)
)
if not 0 < COMPUTER_TIME_LIMIT_SECONDS < TASK_TIME_LIMIT_SECONDS:
    raise ValueError(
        f"COMPUTER_TIME_LIMIT_SECONDS must be above 0 and below TASK_TIME_LIMIT_SECONDS "
        f"({TASK_TIME_LIMIT_SECONDS}), not {COMPUTER_TIME_LIMIT_SECONDS}"
    )
# Seconds the searching computer player (a "hard" game's, games.services.computer_player)
# thinks a decision. A phase asks up to three computers, and a decision may run to 3
# times its budget (docs/computer-players.md), so at most a tenth of the time limit
# keeps a phase's moves inside one task's time.
COMPUTER_SEARCH_SECONDS = env_float("COMPUTER_SEARCH_SECONDS", 0.25)
if not 0 < COMPUTER_SEARCH_SECONDS <= COMPUTER_TIME_LIMIT_SECONDS / 10:
    raise ValueError(
        f"COMPUTER_SEARCH_SECONDS must be above 0 and at most a tenth of "
        f"COMPUTER_TIME_LIMIT_SECONDS ({COMPUTER_TIME_LIMIT_SECONDS / 10:g}), "
        f"not {COMPUTER_SEARCH_SECONDS:g}"
    )
# The recovery pass (games.recovery): how often it runs (the beat's sweep), and how long
# a task the database says is owed may be in flight before it is queued again.
RECOVERY_INTERVAL_SECONDS = env_int("RECOVERY_INTERVAL_SECONDS", 60)
RECOVERY_GRACE_SECONDS = env_int("RECOVERY_GRACE_SECONDS", 30)
# A phase whose stored moves the engine fails to apply is tried this many times (the
# recovery pass tries again after each grace); then the game is paused for repair, its
# operators are told (ADMINS), and `manage.py repair_games` lists and retries it.
RESOLVE_MAX_ATTEMPTS = env_int("RESOLVE_MAX_ATTEMPTS", 3)
if RESOLVE_MAX_ATTEMPTS < 1:
    raise ValueError(f"RESOLVE_MAX_ATTEMPTS must be 1 or more, not {RESOLVE_MAX_ATTEMPTS}")
# A task still waiting in its queue (behind a backlog) is not queued again (games.tasks:
# its mark in Redis, cleared when a worker starts it), for at most this long: a message
# waiting longer is taken for lost, and the recovery pass may queue one more copy.
RECOVERY_QUEUED_SECONDS = env_int("RECOVERY_QUEUED_SECONDS", 1800)
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    # A message a worker took and never acknowledged (it died) goes back to the queue
    # after this; just above the longest task, so that no running task is handed out twice.
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {"visibility_timeout": TASK_TIME_LIMIT_SECONDS + 30}
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
# recovery pass must not wait behind the backlog it is there to recover. Resolving a phase
# has one too, and so have the computers' moves, with a worker of their own
# (lowenherz_site.celery: route_task, WORKERS): a resolve never waits behind the backlog
# of emails, and nothing people wait for waits behind computers thinking.
CELERY_TASK_QUEUES = (Queue("celery"), Queue("sweep"), Queue("resolve"), Queue("computers"))
CELERY_TASK_ROUTES = (
    "lowenherz_site.celery.route_task",
    {
        "games.tasks.sweep": {"queue": "sweep"},
        "games.tasks.send_digests": {"queue": "sweep"},
        "games.tasks.tidy": {"queue": "sweep"},
    },
)
CELERY_TASK_TIME_LIMIT = TASK_TIME_LIMIT_SECONDS
# Every task is acknowledged after it ran (games.tasks): a worker holds one message at a
# time, so that a crash leaves one message to redeliver, not a prefetched batch.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A task runs to its end when the broker connection drops: killing a send after the SMTP
# server's "250" would send it twice; every task is idempotent if its message comes again.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# Queuing a task when the broker is down must not hold up the person who moved: a few
# quick tries, then the failure is logged and the recovery pass queues it later.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_TASK_ALWAYS_EAGER = False
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# --- Email ---------------------------------------------------------------------------------
# EMAIL_URL (smtp://user:password@host:port, smtp+tls://, smtp+ssl://) or the usual Django
# variables (EMAIL_HOST, EMAIL_PORT, ...) choose an SMTP server. Without either, the
# embedded default writes every email as a file in var/mail, where the person running the
# site can read it.


class SmtpServer(NamedTuple):
    host: str
    port: int
    user: str
    password: str
    use_tls: bool
    use_ssl: bool


def smtp_server_of_url(url: str) -> SmtpServer:
    """EMAIL_URL's server; refuses what it cannot understand."""
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(url)
    if parts.scheme not in {"smtp", "smtp+tls", "smtp+ssl"} or not parts.hostname:
        raise ValueError(f"EMAIL_URL must look like smtp://user:password@host:25, not {url!r}")
    return SmtpServer(
        host=parts.hostname,
        port=parts.port or (465 if parts.scheme == "smtp+ssl" else 25),
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        use_tls=parts.scheme == "smtp+tls",
        use_ssl=parts.scheme == "smtp+ssl",
    )


def smtp_server() -> SmtpServer | None:
    """The SMTP server the environment names (EMAIL_URL, else EMAIL_HOST and the other
    EMAIL_* variables), or None."""
    if os.environ.get("EMAIL_URL"):
        return smtp_server_of_url(os.environ["EMAIL_URL"])
    if os.environ.get("EMAIL_HOST"):
        return SmtpServer(
            host=os.environ["EMAIL_HOST"],
            port=env_int("EMAIL_PORT", 25),
            user=os.environ.get("EMAIL_HOST_USER", ""),
            password=os.environ.get("EMAIL_HOST_PASSWORD", ""),
            use_tls=env_bool("EMAIL_USE_TLS", False),
            use_ssl=False,
        )
    return None


EMAIL_FILE_PATH = VAR_DIR / "mail"
# Lower case: not a Django setting, so no settings page lists its password.
_smtp = smtp_server()
if _smtp is not None:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST = _smtp.host
    EMAIL_PORT = _smtp.port
    EMAIL_HOST_USER = _smtp.user
    EMAIL_HOST_PASSWORD = _smtp.password
    EMAIL_USE_TLS = _smtp.use_tls
    EMAIL_USE_SSL = _smtp.use_ssl
else:
    EMAIL_BACKEND = os.environ.get(
        "EMAIL_BACKEND", "django.core.mail.backends.filebased.EmailBackend"
    )
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 20)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Löwenherz <lowenherz@localhost>")
# The site's operators: told by email when a game needs repair (and, as Django does with
# DEBUG off, of a server error). "Name <address>, address, ...".
ADMINS = env_admins("ADMINS")
SERVER_EMAIL = os.environ.get("SERVER_EMAIL", DEFAULT_FROM_EMAIL)
# Moves by email: replies go to play+TOKEN@REPLY_DOMAIN.
REPLY_DOMAIN = os.environ.get("REPLY_DOMAIN", "localhost")
REPLY_LOCAL_PART = os.environ.get("REPLY_LOCAL_PART", "play")
MAGIC_LINK_HOURS = env_int("MAGIC_LINK_HOURS", 72)
# The body of an email sent (or told in another) is cleared after this many days; its row
# stays (games.housekeeping).
EMAIL_BODY_DAYS = env_int("EMAIL_BODY_DAYS", 90)
# Email cadence (games.mail.notify): the confirmation of an emailed move waits this long
# for the person's next email of the game to ride in; results that ask nothing of the
# reader wait for their next email of the game up to EMAIL_RESULTS_HOLD_SECONDS.
EMAIL_COALESCE_SECONDS = env_int("EMAIL_COALESCE_SECONDS", 120)
EMAIL_RESULTS_HOLD_SECONDS = env_int("EMAIL_RESULTS_HOLD_SECONDS", 6 * 3600)
# A message of the table waits for the reader's next email of the game at most this long
# (games.mail.notify.message_posted); a person may choose each message at once instead.
EMAIL_MESSAGES_HOLD_SECONDS = env_int("EMAIL_MESSAGES_HOLD_SECONDS", 3600)
# A person who has the game's page open and visible when a phase needs them is told by
# the page: the "waits for you" email (and push) waits this long, and goes only if they
# have not looked at the game since the phase began (games.watching, games.mail.notify).
EMAIL_WATCHING_SECONDS = env_int("EMAIL_WATCHING_SECONDS", 300)
ANYMAIL = {"WEBHOOK_SECRET": INBOUND_SECRET}
# Who the push services may contact about the site's pushes (the VAPID "sub" claim): a
# mailto: or https: URL.
VAPID_SUBJECT = os.environ.get("VAPID_SUBJECT") or f"mailto:{parseaddr(SERVER_EMAIL)[1]}"
# Seconds a push service has to answer one push (a send retries later, with back-off).
PUSH_TIMEOUT_SECONDS = env_int("PUSH_TIMEOUT_SECONDS", 10)

# Celery beat: the sweeper (recovery, deadlines, reminders, outbox retries) every
# RECOVERY_INTERVAL_SECONDS; digests and housekeeping hourly. A sweep still queued when the
# next is due is dropped (expires): a stopped worker does not come back to a pile of them.
CELERY_BEAT_SCHEDULE = {
    "sweep": {
        "task": "games.tasks.sweep",
        "schedule": float(RECOVERY_INTERVAL_SECONDS),
        "options": {"expires": float(RECOVERY_INTERVAL_SECONDS)},
    },
    "digests": {
        "task": "games.tasks.send_digests",
        "schedule": 3600.0,
        "options": {"expires": 3000.0},
    },
    "housekeeping": {
        "task": "games.tasks.tidy",
        "schedule": 3600.0,
        "options": {"expires": 3000.0},
    },
}

GAME_DEFAULT_DEADLINE_HOURS = env_int("GAME_DEFAULT_DEADLINE_HOURS", 48)


def env_count(name: str, default: int) -> int:
    """A whole number of 1 or more: a limit that 0 would turn into a refusal of all."""
    value = env_int(name, default)
    if value < 1:
        raise ValueError(f"{name} must be 1 or more, not {value}")
    return value


# The table's votes to extend a phase's deadline or pause the phase (games.votes): the
# limits a club would set. A passed extension and a passed pause each count as one change.
VOTE_HOURS = env_count("VOTE_HOURS", 24)  # a proposal is open this long, or to its phase's end
VOTE_EXTEND_MAX_HOURS = env_count("VOTE_EXTEND_MAX_HOURS", 72)  # one extension, at most
VOTE_PAUSE_MAX_DAYS = env_count("VOTE_PAUSE_MAX_DAYS", 7)  # one pause, at most
VOTE_CHANGES_PER_PHASE = env_count("VOTE_CHANGES_PER_PHASE", 2)  # passed, in one phase
VOTE_CHANGES_PER_GAME = env_count("VOTE_CHANGES_PER_GAME", 10)  # passed, in the whole game
VOTE_PROPOSALS_PER_PHASE = env_count("VOTE_PROPOSALS_PER_PHASE", 3)  # made, whatever became of them
