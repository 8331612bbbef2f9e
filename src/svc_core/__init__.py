"""svc core: pure domain logic for the svc data API (no I/O, no clock, no randomness)."""
