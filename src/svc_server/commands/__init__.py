"""Subcommands of ``svc``; each module has ``register(subparsers, common)``."""
