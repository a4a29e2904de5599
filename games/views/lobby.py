"""Views: to be written."""
from django.http import HttpResponse


def lobby(request):
    return HttpResponse("todo")


def create_game(request):
    return HttpResponse("todo")


def join_game(request, game_id):
    return HttpResponse("todo")


def invite(request, token):
    return HttpResponse("todo")
