"""Outbound webhook delivery: the SSRF-safe HTTP sender."""
