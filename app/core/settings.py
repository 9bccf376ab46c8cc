"""The service's settings: the engine's (data dir, exercises, secret, sandbox slots) and its own.

One class read from the environment (prefix AUTOGRADER_), served by a cached getter. Reading the
settings does no work: no directory is made and no engine is started until something asks.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator

from app.core.callback_urls import allow_list_entry
from app.core.db import Timeouts
from app.core.logs import LogFormat
from grader.settings import GraderSettings

SQLITE_FILE = "autograder.db"
# A web origin as a Content-Security-Policy may list it: nothing that could end a directive.
ORIGIN_PATTERN = r"^https?://[\w.-]+(:\d+)?$"


class AppSettings(GraderSettings):
    # Where submissions, API keys and webhook deliveries are kept. Unset: a SQLite file in the data
    # dir (the embedded default). Scale-out: postgresql+psycopg://user@host/db.
    database_url: str | None = None
    # The longest one statement of the service's (API and workers) may run, and the longest it
    # may wait for a lock (SQLite: for the write lock), in seconds. Past them the request gets a
    # 503 with Retry-After (`database-busy`) instead of holding a thread while a table is
    # locked. Commands and migrations are not bounded.
    database_statement_timeout_s: float = Field(default=30.0, gt=0)
    database_lock_timeout_s: float = Field(default=10.0, gt=0)
    # Unset: the service grades in its own pool of threads over warm sandboxes. redis://...: jobs
    # go to grading workers (`autograder worker`) through the broker, and rate limits are kept
    # there too, shared by every API replica.
    broker_url: str | None = None
    # Prepended to every Redis key of this deployment (the broker's queues included), so several
    # deployments or test runs can share one Redis database.
    redis_prefix: str = Field(default="autograder:", pattern=r"^[\w.:-]*$", max_length=64)
    # Seconds a message handed to a worker may stay unacknowledged before Redis hands it to
    # another worker. Longer than any grading and any webhook backoff, so live work is never
    # handed out twice; a dead worker's work comes back sooner through its expired lease.
    broker_visibility_timeout_s: int = Field(default=3600, ge=60)
    # A grader (a worker, or the embedded pool) holds a lease on each submission it grades,
    # renewed every third of this. A lease that lapses means the grader died: its submission
    # goes back to the queue (app.grading.leases).
    worker_lease_s: float = Field(default=30.0, gt=0)
    # How often the sweeper looks for unfinished work that nobody holds (app.grading.sweeper).
    sweep_interval_s: float = Field(default=15.0, gt=0)
    # Where `autograder worker` serves its Prometheus metrics (grading latency, reports,
    # webhooks: they exist only in the process that grades). Port 0: no exporter.
    worker_metrics_host: str = "127.0.0.1"
    worker_metrics_port: int = Field(default=9101, ge=0, le=65535)

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    # None: keys are required unless the service listens on loopback only and trusts no proxy.
    # False is refused at start-up otherwise: an open grader on a network runs anyone's code.
    require_api_keys: bool | None = None
    # Proxies whose X-Forwarded-For and X-Forwarded-Proto are believed, comma-separated
    # addresses or networks; none by default, so a forged header changes nothing (neither the
    # client a rate limit counts nor the scheme). A service behind a trusted proxy needs keys.
    trusted_proxies: str = ""
    # Host names this service answers to, comma-separated; a request for another gets 400, so a
    # web page whose name is rebound to this machine cannot reach it. Unset: the loopback names
    # and the public URL's host, or any host when listening beyond loopback (keys are required
    # there).
    allowed_hosts: str | None = None

    # Larger sources get 413; the request body as a whole may be a little larger (JSON escaping).
    max_source_bytes: int = Field(default=256 * 1024, ge=1024)
    # Admission is by what a caller does, never by how many students a course has queued
    # (app.submissions.admission). Unfinished (queued or running) submissions of one student in
    # one course, at most; past it POST answers 429 with Retry-After.
    max_in_flight_per_student: int = Field(default=3, ge=1)
    # Unfinished submissions that name no student, per API key (a staff script or an
    # integration), at most; past it POST answers 429 with Retry-After.
    max_in_flight_per_key: int = Field(default=64, ge=1)
    # Unfinished submissions deployment-wide, at most: a guard for the disk, far beyond any
    # class; past it POST answers 503 with Retry-After. Work is refused explicitly, never dropped.
    queue_capacity: int = Field(default=20_000, ge=1)
    # The Retry-After of these refusals, in seconds.
    queue_retry_after_s: int = Field(default=5, ge=1)
    # Fair order: a submission ranks by how many its student submitted in the course within
    # this many seconds before it (app.submissions.fair_order).
    fair_window_s: float = Field(default=60.0, ge=0)
    # Grading starts of one submission, at most: a submission whose grading was interrupted
    # (service killed, worker lost) this many times gets an explicit error report instead.
    max_attempts: int = Field(default=3, ge=1, le=20)
    # A submission `running` for longer than this may be claimed again (its grader is presumed
    # dead). Well above any exercise's wall-clock limit, so a live grader is never raced.
    running_stale_after_s: float = Field(default=600.0, gt=0)
    # The longest a POST ?wait=true holds the request before answering 202 with the pending state.
    wait_timeout_s: float = Field(default=60.0, gt=0, le=600)
    # Seconds the service waits for gradings in flight when it stops; the rest are resumed at the
    # next start.
    shutdown_grace_s: float = Field(default=30.0, ge=0)

    # Submissions per minute: per API key (or per client when the service runs open), and per
    # student. 0 turns a limit off. Kept in Redis when broker_url is set (exact across API
    # replicas), else in the API process's memory.
    rate_limit_per_key: int = Field(default=600, ge=0)
    rate_limit_per_student: int = Field(default=60, ge=0)

    # Signs webhook bodies (HMAC-SHA256). Unset: AUTOGRADER_SECRET signs them. Set a separate one
    # when the receiver is run by someone else: the main secret also seeds the hidden tests.
    webhook_secret: SecretStr | None = None
    # Tries per delivery, the first backoff (doubled after each failure, capped) and the timeout.
    webhook_max_attempts: int = Field(default=6, ge=1, le=20)
    webhook_backoff_s: float = Field(default=1.0, gt=0)
    webhook_backoff_max_s: float = Field(default=300.0, gt=0)
    webhook_timeout_s: float = Field(default=10.0, gt=0)
    # Callback URLs may name public addresses only (app.core.callback_urls). These are the
    # exceptions, as JSON: host names as the URL writes them, addresses and networks, e.g.
    # ["hooks.lms.internal", "10.20.0.0/16"].
    webhook_allowed_hosts: list[str] = Field(default_factory=list)

    # The service's public base URL as LMSs and students' browsers reach it (https://...): the
    # LTI URLs are built from it, never from a request's Host header. Unset, they are taken from
    # the request only when the service listens on loopback (a developer's machine).
    public_url: str | None = Field(default=None, pattern=r"^https?://[^\s/]+(/[^\s]*)?$")
    # How long the token that the exercise page gets from a launch stays good.
    lti_session_ttl_s: int = Field(default=4 * 3600, ge=60)
    # Grade passback: posts per score at most, and the first backoff (doubled, capped at the
    # webhook cap).
    lti_score_max_attempts: int = Field(default=8, ge=1, le=30)
    lti_score_backoff_s: float = Field(default=2.0, gt=0)
    # LMS rosters (Names and Role Provisioning, app.lti.roster): a launch asks for a sync when its
    # course's roster is older than this; reads per sync at most; the longest Retry-After of a 429
    # waited out within a read (a longer one ends the attempt, tried again after a backoff).
    lti_roster_stale_s: int = Field(default=24 * 3600, ge=60)
    lti_roster_max_attempts: int = Field(default=5, ge=1, le=30)
    lti_roster_max_wait_s: float = Field(default=30.0, ge=0, le=300)
    # An OIDC login waits this long for its launch; then its stored state is void and purged.
    lti_login_ttl_s: int = Field(default=300, ge=30, le=3600)
    # Logins per minute per client address (each stores a row until it expires); 0: no limit.
    lti_login_rate_per_client: int = Field(default=60, ge=0)
    # Origins allowed to frame the service's pages besides the registered LMS platforms' own
    # (their issuer and login URLs): e.g. a Canvas cloud school's https://school.instructure.com.
    frame_ancestors: list[Annotated[str, Field(pattern=ORIGIN_PATTERN)]] = Field(
        default_factory=list
    )
    # How often each process (API, worker) looks for a change of the exercises folder
    # (app.grading.catalog_watch): an added, changed or removed exercise is served within this.
    catalog_poll_s: float = Field(default=5.0, gt=0)
    # How often each API process looks for due webhook deliveries and score posts
    # (app.outbox.sender); a grading finished in this process wakes it at once.
    outbox_poll_s: float = Field(default=1.0, gt=0)
    # How often each grading process (the embedded API, each worker) looks for a regrade to run
    # (app.regrades), and, while students' submissions come first, whether they are through.
    regrade_poll_s: float = Field(default=2.0, gt=0)
    # How often a process asks the database, once for all its waiting requests (?wait), which of
    # their submissions are finished, in case an announcement was lost (a worker's Redis message
    # dropped): a waiter is woken at once otherwise.
    wait_poll_s: float = Field(default=2.0, gt=0)

    log_level: str = "INFO"
    # json: one JSON object per line (for log collectors); text: one readable line per record.
    # Unset: text when stderr is a terminal, else json.
    log_format: LogFormat | None = None

    @field_validator("broker_url")
    @classmethod
    def _redis_broker(cls, url: str | None) -> str | None:
        if url is not None and not url.startswith(("redis://", "rediss://")):
            raise ValueError(
                "must be a Redis URL (redis://host:6379/0), or unset to grade in this process"
            )
        return url

    @field_validator("webhook_allowed_hosts")
    @classmethod
    def _allow_list(cls, entries: list[str]) -> list[str]:
        return [str(allow_list_entry(entry)) for entry in entries]

    def sqlalchemy_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / SQLITE_FILE).resolve()}"

    def database_timeouts(self) -> Timeouts:
        return Timeouts(self.database_statement_timeout_s, self.database_lock_timeout_s)

    def listens_on_loopback(self) -> bool:
        return is_loopback_host(self.host)

    def proxies(self) -> list[str]:
        return [proxy.strip() for proxy in self.trusted_proxies.split(",") if proxy.strip()]

    def may_run_open(self) -> bool:
        """Keyless only where nobody else can reach it: bound to loopback, behind no proxy."""
        return self.listens_on_loopback() and not self.proxies()

    def api_keys_required(self) -> bool:
        if self.require_api_keys is None:
            return not self.may_run_open()
        return self.require_api_keys

    def answered_hosts(self) -> list[str]:
        if self.allowed_hosts is not None:
            return [host.strip() for host in self.allowed_hosts.split(",") if host.strip()]
        if not self.listens_on_loopback():
            return ["*"]
        hosts = ["localhost", "127.0.0.1", "::1", "[::1]"]
        if self.public_url:
            hosts.append(urlsplit(self.public_url).hostname or "")
        return hosts

    def browser_url(self) -> str:
        """Where a person opens the service: AUTOGRADER_PUBLIC_URL, else http://HOST:PORT."""
        if self.public_url:
            return self.public_url.rstrip("/")
        return f"http://{url_address(self.host, self.port)}"

    def webhook_signing_key(self) -> bytes:
        if self.webhook_secret is not None:
            return self.webhook_secret.get_secret_value().encode()
        return self.master_secret().encode()


def url_address(host: str, port: int) -> str:
    """host:port as a URL writes it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name other than localhost may resolve anywhere
        return False


@lru_cache
def get_settings() -> AppSettings:
    return AppSettings()
