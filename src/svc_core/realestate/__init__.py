"""The real-estate vertical as pure functions: typed queries, and rows and envelopes
computed from transactions and index values (no store, no clock, no HTTP).

``query`` declares and parses the parameters; ``pulse``, ``series``, ``coverage``,
``indices`` and ``dimensions`` compute SPEC's rows and answers; ``common`` holds what the
answers share; ``loads`` turns MOLIT files into the transactions a store would hold. The server reads its store and calls these; a library user passes the
transactions a reader (``svc_core.sources``) parsed.
"""
