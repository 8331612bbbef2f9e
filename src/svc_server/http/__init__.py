"""The request/response kit: request context, strict query and body reading, content
negotiation, conditional requests, gzip, JSON/CSV responses, rendered answers and their
cache, the route declaration type and the session cookie.

Nothing here touches a store or a service: every floor above (the bundled servers, the
handlers, the composition root) builds on it, and it imports only ``svc_core``, werkzeug
and ``config``.
"""
