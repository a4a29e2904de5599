from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from games.mail import receiver
from games.mail import views as mail
from games.views import (
    accounts,
    archive,
    chat,
    deadlines,
    feeds,
    history,
    imports,
    live,
    lobby,
    people,
    play,
    rules,
    table,
)
from lowenherz_site.health import healthz

urlpatterns = [
    path("", lobby.lobby, name="lobby"),
    path("games/new/", lobby.create_game, name="create_game"),
    path("games/<int:game_id>/join/", lobby.join_game, name="join_game"),
    path("invite/<str:token>/", lobby.invite, name="invite"),
    path("games/<int:game_id>/", play.game_page, name="game"),
    path("games/<int:game_id>/view.json", play.game_json, name="game_json"),
    path("games/<int:game_id>/submit/", play.submit, name="submit"),
    path("games/<int:game_id>/live/", live.game_live, name="game_live"),
    path("games/<int:game_id>/history/", history.history, name="game_history"),
    path("live/", live.live, name="live"),
    path("archive/", archive.archive_list, name="archive"),
    path("archive/feed.atom", feeds.FinishedGamesFeed(), name="archive_feed"),
    path("calendar/<str:token>.ics", feeds.calendar, name="calendar"),
    path("accounts/calendar/renew/", feeds.renew_calendar, name="renew_calendar"),
    path("people/<int:user_id>/", people.person, name="person"),
    path("leaderboard/", people.leaderboard, name="leaderboard"),
    path("rules/", rules.rules, name="rules"),
    path("rules/how-to-win/", rules.how_to_win, name="how_to_win"),
    path("archive/<int:game_id>/", archive.archive_game, name="archive_game"),
    path("archive/<int:game_id>/record.json", archive.record_json, name="record_json"),
    path("archive/<int:game_id>/record.txt", archive.record_text, name="record_text"),
    path("archive/import/", imports.import_page, name="import_record"),
    path("games/<int:game_id>/propose/", deadlines.propose, name="propose"),
    path("games/<int:game_id>/vote/", deadlines.vote, name="vote"),
    path("games/<int:game_id>/take-back/", deadlines.take_seat_back, name="take_seat_back"),
    path("games/<int:game_id>/cancel/", table.cancel_game, name="cancel_game"),
    path("games/<int:game_id>/leave/", table.leave_game, name="leave_game"),
    path("games/<int:game_id>/concede/", table.concede, name="concede"),
    path("games/<int:game_id>/say/", chat.say, name="game_say"),
    path("games/<int:game_id>/mute-player/", chat.mute_player, name="mute_player"),
    path("games/<int:game_id>/invite-by-email/", mail.invite_by_email, name="invite_by_email"),
    path("m/<str:signed>/", mail.magic_link, name="magic_link"),
    path("unsubscribe/<str:signed>/", mail.unsubscribe, name="unsubscribe"),
    path("games/<int:game_id>/mute/", mail.mute_game, name="mute_game"),
    path("accounts/notifications/", mail.preferences, name="email_preferences"),
    path("accounts/notifications/push/", mail.push_subscribe, name="push_subscribe"),
    path("accounts/notifications/push/off/", mail.push_unsubscribe, name="push_unsubscribe"),
    path("sw.js", mail.service_worker, name="service_worker"),
    path("anymail/postmark/inbound/", receiver.PostmarkInbound.as_view()),  # before anymail's
    path("anymail/", include("anymail.urls")),
    path("accounts/signup/", accounts.signup, name="signup"),
    path(
        "accounts/signup/<str:uidb64>/<str:token>/", accounts.signup_confirm, name="signup_confirm"
    ),
    path("accounts/password_reset/", accounts.PasswordResetView.as_view(), name="password_reset"),
    path(
        "accounts/reset/<uidb64>/<token>/",
        accounts.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path("accounts/email/<str:signed>/", accounts.email_confirm, name="email_confirm"),
    path("accounts/profile/", accounts.profile, name="profile"),
    path("language/", accounts.set_language, name="set_language"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    # Browsers ask for /favicon.ico where a page names no icon (a feed reader, a JSON tab).
    path(
        "favicon.ico",
        RedirectView.as_view(url=static("games/favicon.svg"), permanent=False),
        name="favicon",
    ),
]
