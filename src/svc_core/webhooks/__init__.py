"""Webhooks, pure: secrets and the ``X-Svc-Signature`` header, event payloads and
subscriptions, ``data.updated`` filters, and which URLs svc may call."""
