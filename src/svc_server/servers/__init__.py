"""The bundled HTTP servers ``svc serve`` runs a WSGI app on: the granian front (with
its admission of tenants and the spill of large answers), the gunicorn wire server, the
refusals both send before an app sees a request, and the port probe.

They take a WSGI app and, for the front, an optional warm lane; they import nothing of
the app's own floors (routes, handlers, services, stores).
"""
