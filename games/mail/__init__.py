"""The email wing: everything the site writes to people and reads from them.

kinds      every kind of email and what it is (transactional, an ask, threaded ...)
compose    one small function per kind of email, over the template triplets
outbox     transport only: a row per email, sending, retries (never composes)
notify     who is told what when a phase changes, reminders, daily digests
inbound    one reply to a "waits for you" email, from any way in
replies    the commands in a reply's text
tokens     reply addresses and magic links
textboard  the board as text for the emails
forms, views, receiver   preferences, magic links, unsubscribing, the anymail receiver
"""
