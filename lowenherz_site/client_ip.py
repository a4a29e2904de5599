"""The client's address, for rate limits and login lockouts.

Behind proxies, the connection's address is the last proxy's: the client is then the
entry of X-Forwarded-For that the first trusted proxy appended, `TRUSTED_PROXY_COUNT`
entries from the right. Entries further left are whatever the client wrote, so they are
never believed.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str:
    proxies = settings.TRUSTED_PROXY_COUNT
    if proxies > 0:
        forwarded = [
            part.strip()
            for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
            if part.strip()
        ]
        if len(forwarded) >= proxies:
            return forwarded[-proxies]
    return str(request.META.get("REMOTE_ADDR", ""))
