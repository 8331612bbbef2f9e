"""Use cases: each takes a store, a caller and a clock; no HTTP objects."""
