"""The JSON schemas that fields of several real-estate rows share (``svc_core.json_schema``):
a district code, whole KRW, the types of a cohort, a row's completeness and the
fields a record and a contract both carry."""

from __future__ import annotations

from svc_core.json_schema import enum, integer, nullable, string
from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES

SIGUNGU_CODE = string("5-digit district (sigungu) code.", pattern="^[0-9]{5}$")
KRW = integer("KRW.")
KRW_OR_NULL = nullable(integer("KRW per month; monthly_lease only."))
DONG_PRECISION = nullable(string("dong precision only."))
"""``gu`` and ``dong`` of a row, set only at dong precision."""
PROPERTY_TYPE = enum(PROPERTY_TYPES)
TRANSACTION_TYPE = enum(TRANSACTION_TYPES)
SOURCE = string("Source id.", pattern="^[a-z][a-z0-9_]{1,39}$")
JIBUN = nullable(string("Lot number as published; masked digits such as 1** stay masked."))
BUILD_YEAR = nullable(integer("Year built as published."))
