"""What a handler is given: the dependency bundle (``Deps``: config, stores, services'
caches, the background lease and request-log writers) and the replies handlers share.

The floor between the handlers, which receive it, and the services it bundles.
"""
