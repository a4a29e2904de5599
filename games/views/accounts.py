"""Views: to be written."""
from django.http import HttpResponse


def signup(request):
    return HttpResponse("todo")


def profile(request):
    return HttpResponse("todo")
