# One image for every process of the site: web (gunicorn), worker and beat (Celery),
# smtpd (the SMTP listener for replies) and the one-shot migrate. compose.yaml picks the
# command; the default is the web server.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/app \
    LOWENHERZ_VAR=/app/var

WORKDIR /app

# The pinned dependencies first, in their own layer: a change to the code does not
# download them again.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt \
    && rm /tmp/requirements.txt

# The project itself. The installed package holds only the Python modules (no templates/
# or static files), so the processes run from this source tree: PYTHONPATH=/app.
COPY . .
RUN pip install --no-deps .

# Static files (Bootstrap is vendored in games/static: nothing comes from a CDN), served
# by whitenoise from STATIC_ROOT = $LOWENHERZ_VAR/static. Collected as root, so they are
# read-only for the site; the site's user owns $LOWENHERZ_VAR for anything it writes there.
RUN python manage.py collectstatic --no-input -v0 \
    && groupadd --system lowenherz \
    && useradd --system --gid lowenherz --create-home --home-dir /home/lowenherz \
        --shell /usr/sbin/nologin lowenherz \
    && chown lowenherz:lowenherz "$LOWENHERZ_VAR"

USER lowenherz

EXPOSE 8000 2525

CMD ["sh", "-c", "exec gunicorn lowenherz_site.wsgi:application --bind 0.0.0.0:8000 --workers ${WEB_CONCURRENCY:-3} --timeout 30"]
