"""The one settings module, driven by environment variables with zero-set-up defaults.

With no environment at all: SQLite at ``var/db.sqlite3`` and Celery on kombu's filesystem broker
under ``var/broker/`` (one machine only: it loses the task of a worker that dies). ``DATABASE_URL``
switches to PostgreSQL, ``REDIS_URL`` to Redis for the broker and the cache.

Every environment variable read here, with its default and meaning, is in ``docs/settings.md``
(``tests/test_settings_doc.py`` keeps the table and this file in step).
Must not import ``arena``.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

import dj_database_url
from kombu import Queue

from sandbox.package import MAX_PACKAGE_BYTES

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("ARENA_VAR_DIR", BASE_DIR / "var")).resolve()
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _env(name: str, default: str) -> str:
    """The variable's value, or ``default`` when it is unset or blank (``NAME=`` left empty in
    .env, as a template might)."""
    raw = os.environ.get(name, "").strip()
    return raw or default


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in ("1", "true", "yes", "on")


def _env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# DEBUG only when asked for (``make run`` and the tests ask): a deployment that forgets to turn it
# off would show its settings (REDIS_URL with its password) on every error page.
DEBUG = _env_bool("DJANGO_DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if DEBUG:
        SECRET_KEY = "insecure-development-key-do-not-use-in-production"
    elif sys.argv[1:2] == ["play"]:  # a local duel signs nothing: a throw-away key will do
        SECRET_KEY = secrets.token_urlsafe(50)
    else:
        raise RuntimeError(
            "set DJANGO_SECRET_KEY (or DJANGO_DEBUG=1 for development, as `make run` does)"
        )
ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = _env_list("CSRF_TRUSTED_ORIGINS", "")

# --- HTTPS (production) ---------------------------------------------------------------------------
# With DEBUG off the site is served over HTTPS by default (``ARENA_HTTPS=0`` for plain HTTP on a
# private network, as compose's localhost quick start does): cookies only over HTTPS, HTTP
# redirected, HSTS for a year. TLS ends at a reverse proxy that sets ``X-Forwarded-Proto``.
ARENA_HTTPS = _env_bool("ARENA_HTTPS", not DEBUG)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = ARENA_HTTPS
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = CSRF_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if ARENA_HTTPS:
    SECURE_SSL_REDIRECT = _env_bool("ARENA_SSL_REDIRECT", True)
    SECURE_REDIRECT_EXEMPT = [r"^health/$"]  # the load balancer's probe speaks plain HTTP
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = int(_env("ARENA_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("ARENA_HSTS_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = _env_bool("ARENA_HSTS_PRELOAD", True)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "arena",
]

MIDDLEWARE = [
    "config.middleware.RequestSizeLimitMiddleware",
    "config.middleware.NulInQueryMiddleware",
    "config.middleware.ContentSecurityPolicyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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

# --- database ------------------------------------------------------------------------------------

_SQLITE_DEFAULT = f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or _SQLITE_DEFAULT, conn_max_age=60
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file (not memory) for the test database too, so a worker process can share it; a busy
    # timeout because web and worker write to the same file.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}
else:
    # A reused connection is checked before its first query of a request or task (one round trip)
    # and replaced if the server cut it (restart, pg_terminate_backend): no 500s, no lost tasks.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- cache (upload throttling) -------------------------------------------------------------------

REDIS_URL = os.environ.get("REDIS_URL", "")
#: Put before every Redis key, the cache's and the broker's, so that several sites (or test runs:
#: the test suite sets one per run) can share one Redis database without seeing each other's keys.
REDIS_PREFIX = os.environ.get("ARENA_REDIS_PREFIX", "")
if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                    "KEY_PREFIX": REDIS_PREFIX}
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# The Redis backend reusing its client objects (Django's makes one per call: ``config/cache.py``).
if REDIS_URL:
    CACHES["default"]["BACKEND"] = "config.cache.RedisCache"

# --- auth, i18n, static --------------------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
#: Largest request body accepted at all (413 before it is read, the one size check before the
#: package's own): by default a bot package at its cap and its multipart envelope.
ARENA_MAX_REQUEST_BYTES = int(
    _env("ARENA_MAX_REQUEST_BYTES", str(MAX_PACKAGE_BYTES + 64 * 1024))
)
DATA_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/bots/"
LOGOUT_REDIRECT_URL = "/"

# --- REST API ------------------------------------------------------------------------------------

REST_FRAMEWORK = {
    # JSON bodies unless a view says otherwise (the uploads take multipart): one request body type
    # per operation, so a generated client sends what the server reads.
    "DEFAULT_PARSER_CLASSES": ["arena.api.parsers.NestingSafeJSONParser"],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "arena.api.authentication.ArenaTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    # Every API request is throttled per client address (anonymous) or per user; uploads have a
    # rate of their own (``ARENA_UPLOAD_RATE``). Counters live in the cache (Redis in production).
    "DEFAULT_THROTTLE_CLASSES": ["arena.api.throttles.ApiRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "anon": _env("ARENA_API_ANON_RATE", "600/minute"),
        "user": _env("ARENA_API_USER_RATE", "1200/minute"),
    },
    # Reverse proxies in front of gunicorn: the client address is then taken from
    # X-Forwarded-For (else every client behind the proxy would share one throttle). 0, not
    # DRF's None, without one: None reads the whole X-Forwarded-For header as the client's
    # identity, which a client may write anew on every request to pass the throttle.
    "NUM_PROXIES": int(_env("ARENA_NUM_PROXIES", "0")),
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Quatre Sept Arena API",
    "DESCRIPTION": "Upload bots, schedule round-robins, read results, replays and ratings.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and ReDoc from this site's own static files (drf-spectacular-sidecar): the docs
    # work with no internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "arena.api.schema.document_errors",
        "arena.api.schema.nullable_items",
    ],
    "ENUM_NAME_OVERRIDES": {
        "VersionStatusEnum": "arena.models.VersionStatus",
        "MatchStatusEnum": "arena.models.MatchStatus",
        "TournamentStatusEnum": "arena.models.TournamentStatus",
        "PresetEnum": "arena.api.shapes.PRESET_CHOICES",
    },
}

# --- the arena -----------------------------------------------------------------------------------

#: Sandbox backend for uploaded bots: "bwrap" (local) or "docker" (compose). Built-in bots always
#: run in the trusted runner; uploaded ones never do.
ARENA_SANDBOX = os.environ.get("ARENA_SANDBOX", "bwrap")
#: Where workers unpack bot versions, one folder per package hash.
ARENA_BOT_CACHE = Path(os.environ.get("ARENA_BOT_CACHE", VAR_DIR / "bots")).resolve()
#: A bot folder no match on this host has used for this many days leaves the host's bot cache
#: (unpacked again from the database if it plays again); 0 keeps every folder.
ARENA_KEEP_BOT_CACHE_DAYS = int(_env("ARENA_KEEP_BOT_CACHE_DAYS", "14"))
#: Retention (``arena.services.retention``: every 6 hours from celery beat, or ``manage.py
#: prune``): a match's replay and its seats' stderr tails are deleted this many days after it
#: finished; 0 keeps them for ever. Results, standings and ratings are always kept.
ARENA_KEEP_REPLAYS_DAYS = int(_env("ARENA_KEEP_REPLAYS_DAYS", "0"))
ARENA_KEEP_LOGS_DAYS = int(_env("ARENA_KEEP_LOGS_DAYS", "0"))
#: Under ARENA_SANDBOX=docker: pre-started seat containers per worker process (each serves one seat
#: of one match and is removed); 0 starts every seat's container on the match's path.
ARENA_DOCKER_POOL = int(_env("ARENA_DOCKER_POOL", "4"))
#: The move clock of every match (protocol ``clock.move_ms``), in milliseconds.
ARENA_MOVE_MS = int(_env("ARENA_MOVE_MS", "1000"))
#: Fixed-time turns for every rated match: each decision is released ``ARENA_MOVE_MS`` after it was
#: asked, which closes the think-time channel between partners (docs/security.md). Validation
#: matches are never fixed-time.
ARENA_FIXED_TURNS = _env_bool("ARENA_FIXED_TURNS", False)
#: Hard limit on one match task, in seconds (a match's clocks allow 4 x (10 s + 60 s) of thinking;
#: under fixed-time turns each decision also takes the move clock: 5,000 decisions, about the
#: safety limit's 100 deals, are added).
ARENA_MATCH_TIME_LIMIT = int(
    _env(
        "ARENA_MATCH_TIME_LIMIT",
        str(600 + (5_000 * ARENA_MOVE_MS // 1000 if ARENA_FIXED_TURNS else 0)),
    )
)
#: A match running longer than this is failed by the sweep (its worker is presumed lost); above
#: the broker's visibility timeout, so Redis gets to redeliver first.
ARENA_STUCK_AFTER = int(_env("ARENA_STUCK_AFTER", str(3 * ARENA_MATCH_TIME_LIMIT)))
#: Bot uploads (new bots and new versions) per user, through the pages and the API together.
ARENA_UPLOAD_RATE = _env("ARENA_UPLOAD_RATE", "60/hour")
# A match the platform itself could not play (not a bot's fault) is started at most this many times
# in all, the next start this many seconds after a failure; then it is void (failed, counts for
# nobody): docs/security.md.
#: Signups per client address (``REMOTE_ADDR``, or X-Forwarded-For behind ARENA_NUM_PROXIES).
ARENA_SIGNUP_RATE = _env("ARENA_SIGNUP_RATE", "5/hour")
#: Sign-in attempts (the login page and ``POST /api/token/`` together) per client address: a
#: password is not guessed at 600 tries a minute.
ARENA_LOGIN_RATE = _env("ARENA_LOGIN_RATE", "30/hour")
#: Matches one user may have queued or running at once (their round-robins' and their uploads'
#: validations); a round-robin that would pass it is refused (429 with Retry-After). Staff are
#: exempt, as from ARENA_UPLOAD_RATE.
ARENA_MAX_QUEUED_MATCHES = int(_env("ARENA_MAX_QUEUED_MATCHES", "5000"))
ARENA_MATCH_ATTEMPTS = int(_env("ARENA_MATCH_ATTEMPTS", "3"))
ARENA_PLATFORM_RETRY_DELAY = int(_env("ARENA_PLATFORM_RETRY_DELAY", "30"))
#: Least time between two refits of one rating board, in seconds: results arriving meanwhile wait
#: for the next refit (each refit reads and fits every result of its board).
ARENA_REFIT_EVERY = int(_env("ARENA_REFIT_EVERY", "30"))
#: A board's rating history keeps one generation per this many seconds (and the latest two).
ARENA_RATING_HISTORY_EVERY = int(_env("ARENA_RATING_HISTORY_EVERY", "3600"))
#: The system user that owns the built-in bots.
ARENA_SYSTEM_USER = "arena"
# The continuous ladder (``arena.services.ladder``): off everywhere with ARENA_LADDER=0; a tick
# every ARENA_LADDER_TICK s tops the matches queue up to ARENA_LADDER_DEPTH queued matches (of
# every kind: user round-robins go first), at most ARENA_LADDER_MAX_PER_HOUR matches an hour
# (0: no cap); a version unpaired for ARENA_LADDER_MAX_WAIT s is paired first.
ARENA_LADDER = _env_bool("ARENA_LADDER", True)
ARENA_LADDER_TICK = float(_env("ARENA_LADDER_TICK", "5"))
ARENA_LADDER_DEPTH = int(_env("ARENA_LADDER_DEPTH", "6"))
ARENA_LADDER_MAX_PER_HOUR = int(_env("ARENA_LADDER_MAX_PER_HOUR", "0"))
ARENA_LADDER_MAX_WAIT = int(_env("ARENA_LADDER_MAX_WAIT", "1800"))

# --- Celery --------------------------------------------------------------------------------------

BROKER_DIR = VAR_DIR / "broker"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Above the longest match, so a slow match is never handed to a second worker...
        "visibility_timeout": int(
            os.environ.get("ARENA_VISIBILITY_TIMEOUT") or str(ARENA_MATCH_TIME_LIMIT + 300)
        ),
        # ...and a dead worker's match comes back soon after it: kombu's defaults scan for
        # abandoned messages only every 10 s x 10 = 100 s.
        "unacked_restore_interval": 5,
        "unacked_restore_throttle": 1,
    }
    if REDIS_PREFIX:
        CELERY_BROKER_TRANSPORT_OPTIONS["global_keyprefix"] = REDIS_PREFIX
else:
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
    for _folder in ("queue", "control"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)

CELERY_TASK_DEFAULT_QUEUE = os.environ.get("ARENA_QUEUE", "arena")
# Matches go to the default queue; short platform work (rating refits, the stuck-match sweep, due
# schedules) to a queue of its own, which every worker consumes too (kombu alternates between a
# worker's queues), so it never waits behind a round-robin's thousands of queued matches.
ARENA_CONTROL_QUEUE = f"{CELERY_TASK_DEFAULT_QUEUE}-control"
CELERY_TASK_QUEUES = (Queue(CELERY_TASK_DEFAULT_QUEUE), Queue(ARENA_CONTROL_QUEUE))
CELERY_TASK_ROUTES = {
    task: {"queue": ARENA_CONTROL_QUEUE}
    for task in (
        "arena.tasks.refit_ratings", "arena.tasks.sweep_stuck_matches",
        "arena.tasks.run_due_schedules", "arena.tasks.ladder_tick", "arena.tasks.prune_old_data",
    )
}
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Keep each worker process's database connection across tasks (Celery closes it around every
# task otherwise: a new PostgreSQL backend per match); Django still drops it after CONN_MAX_AGE.
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_TIME_LIMIT = ARENA_MATCH_TIME_LIMIT
CELERY_TASK_SOFT_TIME_LIMIT = ARENA_MATCH_TIME_LIMIT - 30
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_WORKER_SEND_TASK_EVENTS = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Sending a task (after a commit: matches, refits) retries for about 20 s, so a Redis restart does
# not drop it (the default gives up after 0.6 s, leaving a queued match without a task).
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 25, "interval_start": 0, "interval_step": 0.5, "interval_max": 1,
}
CELERY_TASK_ALWAYS_EAGER = _env_bool("CELERY_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BEAT_SCHEDULE = {
    "sweep-stuck-matches": {"task": "arena.tasks.sweep_stuck_matches", "schedule": 60.0},
    "run-due-schedules": {"task": "arena.tasks.run_due_schedules", "schedule": 60.0},
    "prune-old-data": {"task": "arena.tasks.prune_old_data", "schedule": 6 * 3600.0},
    "ladder-tick": {
        "task": "arena.tasks.ladder_tick", "schedule": ARENA_LADDER_TICK,
        "options": {"expires": ARENA_LADDER_TICK * 2},
    },
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": _env("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}
