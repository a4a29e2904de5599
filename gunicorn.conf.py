"""gunicorn's own settings for the site's web processes, read from the working directory
by every `gunicorn` command (the Procfile, the Dockerfile, compose.yaml): a worker keeps
its database connection from request to request.

Django's default opens a new PostgreSQL connection for every request, which cost an open
page's poll several times its own work (bench `open-tabs`). A gunicorn worker handles one
request at a time, so one kept connection each: WEB_CONCURRENCY connections per web
process. Only here, not in the settings: the development server and the tests' servers
start a thread per request, which would leave a connection behind with each.
DATABASE_CONN_MAX_AGE in the environment, if set, decides (0: a new one each request,
e.g. behind PgBouncer in transaction mode); a connection a database restart cut is
opened again (CONN_HEALTH_CHECKS, lowenherz_site.settings).
"""

import os

WEB_CONN_MAX_AGE = 60  # seconds

os.environ.setdefault("DATABASE_CONN_MAX_AGE", str(WEB_CONN_MAX_AGE))
