"""Scale-out: grading in `autograder worker` processes, fed through Celery on Redis.

Chosen by AUTOGRADER_BROKER_URL=redis://... (with AUTOGRADER_DATABASE_URL=postgresql+psycopg://...
shared by the API replicas and the workers). The database stays the source of truth; Redis
carries messages, leases and rate limits, and losing any of them delays work but loses none.

    autograder serve (API)                       autograder worker (N of them)
    ─────────────────────                        ─────────────────────────────
    commit row ─▶ CeleryDispatcher.submit ─▶ Redis ─▶ grade task: lease the first in line,
                  (task carries the id only)          app.grading.job.grade_next(id, context)
                                                      webhooks: deliver task, re-sent with backoff
    Sweeper (in both; one sweep a period across the deployment): an unfinished row that no
    ticket or lease covers (a killed worker, a lost message) goes back to the queue.

    broker      the Celery app: the delivery guarantees and why each setting is chosen
    tickets     who answers for an unfinished submission right now (broker message or worker)
    registry    live workers and their sandbox layers, for /readyz
    sweeper     re-dispatches unfinished work nobody holds, and stuck webhook deliveries
    dispatcher  the API side: CeleryDispatcher (the Dispatcher protocol of app.grading.dispatch)
    tasks       the worker side: the grade and deliver tasks
    notify      "done" announcements that wake the API's ?wait=true requests at once
    worker      the `autograder worker` process, and its metrics exporter
    ratelimit   token buckets in Redis, shared by every API replica

May import: core, grading."""
