"""Views: to be written."""
from django.http import HttpResponse


def game_page(request, game_id):
    return HttpResponse("todo")


def game_json(request, game_id):
    return HttpResponse("todo")


def submit(request, game_id):
    return HttpResponse("todo")
