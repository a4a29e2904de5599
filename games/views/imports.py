"""Importing a game's record file into the archive (games.records does the work).

The upload is bounded before the engine sees it: `BoundedUpload` drops a file larger
than `engine.replay.MAX_BYTES` as it streams in (the CSRF check would otherwise read the
whole body first: the handler is put in place before it, as Django's documentation
shows), and `games.records` bounds the replay by the record's count of moves; a person
imports at most `RATE_LIMITS["record_import"]` files (HTTP 429 beyond).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods
from django_ratelimit.decorators import ratelimit

from engine.replay import MAX_BYTES
from games.limits import rate_of
from games.records import ImportRefused, import_record, too_big_text


class BoundedUpload(FileUploadHandler):
    """Drops an uploaded file once it grows beyond `MAX_BYTES` (and says so: `dropped`),
    so that a huge file is never kept, in memory or on disk."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.received, self.dropped = 0, False

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.received += len(raw_data)
        if self.received > MAX_BYTES:
            self.dropped = True
            raise SkipFile
        return raw_data  # the next handler (memory or disk) keeps it

    def file_complete(self, file_size: int) -> None:
        return None


class ImportForm(forms.Form):
    record = forms.FileField(
        label=gettext_lazy("Record file"),
        help_text=gettext_lazy("A game record in the documented format (JSON), at most 512 KB."),
        widget=forms.ClearableFileInput(attrs={"class": "form-control", "accept": ".json"}),
    )


@csrf_exempt  # checked by `_import_page`, once the upload handler is in place
@login_required
@ratelimit(
    group="lowenherz.record_import", key="user", rate=rate_of("record_import"), method="POST"
)
def import_page(request: HttpRequest) -> HttpResponse:
    bound = BoundedUpload(request)
    request.upload_handlers.insert(0, bound)
    return _import_page(request, bound)


@csrf_protect
@require_http_methods(["GET", "POST"])
def _import_page(request: HttpRequest, bound: BoundedUpload) -> HttpResponse:
    if request.method != "POST":
        return _page(request, ImportForm())
    form = ImportForm(request.POST, request.FILES)
    if bound.dropped:
        form.add_error(None, too_big_text())
        return _page(request, form, status=400)
    if not form.is_valid():
        return _page(request, form, status=400)
    assert isinstance(request.user, User)  # login_required
    try:
        game = import_record(form.cleaned_data["record"].read(MAX_BYTES + 1), request.user)
    except ImportRefused as refused:
        form.add_error(None, str(refused))
        return _page(request, form, status=400)
    messages.success(request, _("The game was imported: it replays to the scores it says."))
    return redirect("archive_game", game.pk)


def _page(request: HttpRequest, form: ImportForm, status: int = 200) -> HttpResponse:
    context: dict[str, Any] = {"form": form, "max_kb": MAX_BYTES // 1024}
    return render(request, "archive/import.html", context, status=status)
