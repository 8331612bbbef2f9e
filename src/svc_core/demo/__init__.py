"""Deterministic synthetic demo data for ``svc demo-data``: real-estate transactions and
index observations (``realestate``) and the marketplace set (``markets``)."""
