"""Views: to be written."""
from django.http import HttpResponse


def archive_list(request):
    return HttpResponse("todo")


def archive_game(request, game_id):
    return HttpResponse("todo")


def record_json(request, game_id):
    return HttpResponse("todo")
