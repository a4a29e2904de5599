from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from games.views import accounts, archive, lobby, play

urlpatterns = [
    path("", lobby.lobby, name="lobby"),
    path("games/new/", lobby.create_game, name="create_game"),
    path("games/<int:game_id>/join/", lobby.join_game, name="join_game"),
    path("invite/<str:token>/", lobby.invite, name="invite"),
    path("games/<int:game_id>/", play.game_page, name="game"),
    path("games/<int:game_id>/view.json", play.game_json, name="game_json"),
    path("games/<int:game_id>/submit/", play.submit, name="submit"),
    path("archive/", archive.archive_list, name="archive"),
    path("archive/<int:game_id>/", archive.archive_game, name="archive_game"),
    path("archive/<int:game_id>/record.json", archive.record_json, name="record_json"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/profile/", accounts.profile, name="profile"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
]
