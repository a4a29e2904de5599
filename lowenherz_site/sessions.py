"""The site's sessions (settings.SESSION_ENGINE): Django's database sessions, the same
table, rows and cookie, read with one statement written out.

Every request of a signed-in person reads its session, and an open page does so every
LIVE_POLL_SECONDS (games.views.live): building the ORM's query for that read cost about
eight times running it. Writing, expiry and clearing stay Django's.
"""

from __future__ import annotations

from django.contrib.sessions.backends.db import SessionStore as DatabaseStore
from django.contrib.sessions.models import Session
from django.db import connections, router
from django.utils import timezone

_READ = (
    f"SELECT session_data, expire_date FROM {Session._meta.db_table} "
    "WHERE session_key = %s AND expire_date > %s"
)


class SessionStore(DatabaseStore):
    def _get_session_from_db(self) -> Session | None:
        """The unexpired row of this key, as Django's own query finds it; else None,
        and the key forgotten (a new one is made if the session is saved)."""
        key = self.session_key
        row = None
        if key is not None:
            with connections[router.db_for_read(Session)].cursor() as cursor:
                cursor.execute(_READ, [key, timezone.now()])
                row = cursor.fetchone()
        if key is None or row is None:
            self._session_key = None
            return None
        return Session(session_key=key, session_data=row[0], expire_date=row[1])
