"""HTTP handlers: unpack the request, call one service, pack the response."""
