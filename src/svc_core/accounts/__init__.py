"""The commercial surface, pure: API key formats and IP rules, plans, quota months and
per-minute limits, lease sizes, usage summaries, account request bodies and the request
log."""
