"""The network edge: outbound webhook delivery (the SSRF-safe sender) and the client of
the official data APIs (``rtms``)."""
