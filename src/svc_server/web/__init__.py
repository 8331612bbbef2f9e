"""The browser side of svc: the dashboard, the sign-in page, ``/docs`` and their assets.

Pages are rendered on the server as plain HTML shells; a small script without a build
step (``static/dashboard.js``) fills them from the same JSON API any client uses
(``/api/auth/me/*`` and ``/api/v1/*``, with the session cookie). Every page is sent
with a strict Content-Security-Policy: scripts and styles only from ``/static/``.
"""
