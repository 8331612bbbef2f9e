"""Component schemas of the OpenAPI document: rows, envelopes, bodies and errors.

JSON Schema 2020-12 (the OpenAPI 3.1 dialect). Enumerations come from the code that
enforces them (``svc_core``), so a new property type or event type reaches the
document without an edit here. Response objects are closed (``additionalProperties:
false``) so the contract tests notice a field the document does not name.

Long because it is a table: one schema per row, envelope and body shape of SPEC, each
read on its own.
"""

from __future__ import annotations

from collections.abc import Iterable

from svc_core import periods
from svc_core.accounts import bodies, keys
from svc_core.accounts.bodies import ROLES
from svc_core.accounts.keys import MODES, SCOPES, KeyStatus
from svc_core.accounts.plans import DEFAULT_PLANS, TIER_ORDER
from svc_core.cohorts.confidence import LEVELS
from svc_core.cohorts.stats import AREA_UNITS
from svc_core.fields import Field
from svc_core.json_schema import (
    Schema,
    array,
    attrs_schema,
    boolean,
    counts,
    enum,
    field_schemas,
    integer,
    nullable,
    number,
    obj,
    ref,
    string,
)
from svc_core.markets import CATEGORIES, K_ANONYMITY, PRODUCT_TYPES
from svc_core.models import (
    PROPERTY_TYPES,
    TRANSACTION_TYPES,
)
from svc_core.realestate.area_names import suffix
from svc_core.realestate.building_uses import UseCount
from svc_core.realestate.compare import CompareRow
from svc_core.realestate.contract_record import ContractRecord
from svc_core.realestate.coverage import CoverageRow
from svc_core.realestate.dimensions import CodedCount, TypedCount, ValueCount
from svc_core.realestate.indices import IndexRow
from svc_core.realestate.loaded import NOT_FOUND_REASONS
from svc_core.realestate.pulse_row import served_schemas
from svc_core.realestate.query import GRANULARITIES
from svc_core.realestate.record import (
    TransactionRecord,
)
from svc_core.realestate.regions_answer import KINDS, RegionRow
from svc_core.webhooks.event_filters import FILTER_KEYS
from svc_core.webhooks.events import EVENT_TYPES, SUBSCRIBABLE, SUBSCRIPTION_STATUSES
from svc_server.services.delivery_log import DELIVERY_OUTCOMES, DELIVERY_STATUSES
from svc_server.services.team import MemberStatus
from svc_server.store.webhooks import EndpointStatus

PLANS: tuple[str, ...] = tuple(DEFAULT_PLANS)
CONFIDENCE: tuple[str, ...] = LEVELS
KEY_STATUSES: tuple[str, ...] = tuple(KeyStatus)
MEMBER_STATUSES: tuple[str, ...] = tuple(MemberStatus)
ENDPOINT_STATUSES: tuple[str, ...] = tuple(EndpointStatus)

# Period grammar (svc_core.periods): years 1990 to 2100.
MONTH = periods.MONTH_PATTERN


def field_schema(field: Field) -> Schema:
    """The schema of a body field, from the declaration that validates it."""
    out: Schema
    if field.kind == "enum":
        out = {"type": "string", "enum": list(field.choices)}
    elif field.kind == "integer":
        out = {"type": "integer", "minimum": field.low, "maximum": field.high}
    elif field.kind in ("strings", "array"):
        out = {"type": "array", "items": {"type": "string"}}
        if field.max_length is not None:
            out["maxItems"] = field.max_length
    elif field.kind == "string":
        out = {"type": "string"}
        if field.max_length is not None:
            out["maxLength"] = field.max_length
    else:
        out = {}
    out.update(field.doc)
    if field.description:
        out["description"] = field.description
    if field.nullable:
        out = nullable(out)
    if field.default is not None:
        out["default"] = field.default
    return out


def body(fields: Iterable[Field], description: str | None = None) -> Schema:
    """A request body schema from its field declarations (closed: unknown fields are 400)."""
    declared = list(fields)
    return obj(
        {f.name: field_schema(f) for f in declared},
        required=[f.name for f in declared if f.required],
        description=description,
    )


UUID = string(format="uuid")
TIMESTAMP = string("ISO-8601 UTC timestamp, e.g. 2026-01-31T09:00:00Z.", format="date-time")
API_KEY = string(
    "The plaintext API key; returned only in this response.",
    pattern="^svc_pk_(live|test)_[0-9a-f]{32}$",
)

# errors ------------------------------------------------------------------------------------

ERROR_DETAIL = obj(
    {
        "code": string(
            "Machine-readable error code such as INVALID_PARAMS or UNAUTHORIZED.",
            pattern="^[A-Z][A-Z0-9_]*$",
        ),
        "message": string("What went wrong, for a human."),
        "hint": string("How to fix the request, when there is something to say."),
        "current_tier": enum(PLANS, "403 TIER_RESTRICTED only: the caller's plan."),
        "required_tier": enum(TIER_ORDER, "403 TIER_RESTRICTED only: the plan needed."),
        "upgrade_url": string("403 TIER_RESTRICTED only: where to upgrade.", format="uri"),
        "reason": enum(
            NOT_FOUND_REASONS,
            "404 NOT_FOUND of pulse, pulse/series, transactions and indices only: "
            "not_loaded when no month of the asked period (of every requested period, for "
            "a series) is loaded completely for the district and types, so svc cannot tell "
            "whether it has deals (indices: no R-ONE value is loaded at all: svc sync rone "
            "with an R-ONE key loads them); too_few_transactions when data was loaded but "
            "no cohort has at least 2 transactions; unknown_district when no district has "
            "or had the code and nothing was loaded under it.",
        ),
        "request_id": string("The request's id, also in the X-Request-ID header."),
    },
    required=("code", "message", "request_id"),
)
ERROR = obj(
    {
        "error": ref("ErrorDetail"),
        "_meta": {
            "type": "object",
            "description": "On /api/v1 refusals: {service, api_version} (and rate_limit once "
            "the caller is known); on real-estate 404s the full layer envelope.",
        },
    },
    required=("error",),
    description="The error body of every 4xx and 5xx response, always JSON.",
)
ENVELOPE_ERROR = obj(
    {"error": ref("ErrorDetail"), "_meta": ref("LayerEnvelope")},
    description="A real-estate 404: the error plus the same layer envelope a 200 carries.",
)

# real estate ------------------------------------------------------------------------------

RATE_LIMIT = obj(
    {
        "limit_per_min": integer("The caller's per-minute limit."),
        "remaining": nullable(integer("Calls left in the current minute.")),
    }
)
CONFIDENCE_LEVEL = nullable(enum(CONFIDENCE))
LAYER_ENVELOPE = obj(
    {
        "service": string(const="svc"),
        "api_version": string(const="v1"),
        "vertical": string(const="real_estate"),
        "tier": enum(PLANS, "The caller's plan."),
        "auth_method": enum(("api_key", "session"), "How the caller authenticated."),
        "data_sources": array(string(pattern="^[a-z][a-z0-9_]{1,39}$"), "Source ids."),
        "coverage_estimate": {"type": "null", "description": "Not estimated (always null)."},
        "coverage_estimate_method": string(),
        "coverage_note": string("Share of transactions reported, and what was excluded."),
        "lease_data_status": enum(("not_mandated", "absent", "reported")),
        "lease_data_note": string(),
        "known_limitations": array(string()),
        "disclosure_url": string("The trust-disclosure page.", format="uri"),
        "confidence": CONFIDENCE_LEVEL,
        "source_mix": counts("Samples per source."),
        "generated_at": TIMESTAMP,
        "count": integer("Number of data rows.", minimum=0),
        "query": {
            "type": "object",
            "description": "Echo of the resolved query; rolling windows add window_from "
            "and window_to.",
            "additionalProperties": {
                "type": ["string", "integer", "boolean", "array", "null"],
                "items": {"type": "string"},
            },
        },
        "rate_limit": ref("RateLimit"),
        "periods_requested": array(string(), "pulse/series only."),
        "periods_returned": array(string(), "pulse/series only."),
        "missing_periods": array(string(), "pulse/series only."),
        "unloaded_periods": array(
            string(),
            "pulse/series: the requested periods none of whose months is loaded "
            "completely for the district and types (their rows, if any, say complete: "
            "false). When it holds every requested period, the 404's error.reason is "
            "not_loaded. transactions: the months (YYYY-MM) of the selection never loaded "
            "completely for the district and types: an empty or short listing over them "
            "says nothing about deals (CSV: X-Svc-Unloaded-Periods).",
        ),
        "exclusions": counts(
            "pulse, series and transactions: the records excluded at ingest by rule "
            "(cancelled, partial_share) in this answer's districts, months and types, by "
            "reason (coverage_note states them in words); records excluded by loads before "
            "excluded records were kept are not counted."
        ),
        "rejected_rows": array(
            obj(
                {
                    "sigungu_code": string("The district the record names."),
                    "month": string("The month (YYYY-MM) the record names."),
                    "count": integer("Records rejected.", minimum=1),
                    "reasons": counts("Records rejected by reason (invalid_amount, ...)."),
                },
                required=("sigungu_code", "month", "count", "reasons"),
            ),
            "pulse, series and transactions: the records rejected at ingest as malformed "
            "(an amount such as 27,0000000, a date that does not exist) in this answer's "
            "districts, months and types, per district-month: they are in no figure, and "
            "a month can be complete with some. A record whose type could not be read "
            "counts for every type. transactions?include_excluded=true lists them "
            "(rejected_records). CSV: X-Svc-Rejected-Rows.",
        ),
        "rejected_records": array(
            obj(
                {
                    "natural_key": string(),
                    "sigungu_code": string(),
                    "month": string(),
                    "property_type": nullable(string("null when it could not be read.")),
                    "transaction_type": nullable(string("null when it could not be read.")),
                    "rejected_reason": string("Why it was rejected (invalid_amount, ...)."),
                    "detail": string("What was malformed, as the load report says it."),
                    "source_file": string("The file (or sync month) it was read from."),
                    "source_line": integer("Its line (CSV) or item ordinal (API answer)."),
                    "kind": string("The svc ingest kind of the load."),
                },
                required=(
                    "natural_key",
                    "sigungu_code",
                    "month",
                    "rejected_reason",
                    "detail",
                    "source_file",
                    "source_line",
                    "kind",
                ),
            ),
            "transactions with include_excluded=true only (JSON): the selection's records "
            "rejected at ingest as malformed, with their reason, at most 200 (every page "
            "carries them; rejected_rows counts them all).",
        ),
        "granularity": enum(GRANULARITIES, "coverage only."),
        "row_cap": integer("coverage only: the limit applied.", minimum=1),
        "cap_rate_method": string(
            "indices only: how annualized_cap_rate is computed (income_yield value_pct x 4)."
        ),
        "next_cursor": nullable(
            string(
                "transactions and changes only: the cursor of the next page (pass it as "
                "cursor, or as since for changes); null on the last page.",
                pattern="^[A-Za-z0-9_-]+$",
            )
        ),
        "latest_cursor": string(
            "changes only: where to resume later (pass it as since): after every record "
            "this answer could see, on the last page too; the next poll returns only "
            "records written since.",
            pattern="^[A-Za-z0-9_-]+$",
        ),
        "data_as_of": nullable(
            string(
                "When the data behind the answer last changed (ISO-8601 UTC): the latest "
                "load or sync that inserted, retracted or updated a record of the "
                "answer's district (with its renumbering aliases; every district for "
                "answers without one); a reload that changes nothing does not move it. "
                "Pulse, series, coverage, transactions and dimensions follow the "
                "transactions, indices the index values. Null before any data. CSV: "
                "X-Svc-Data-As-Of.",
                format="date-time",
            )
        ),
        "data_version": nullable(
            integer(
                "The id of the latest change behind the answer (GET "
                "/api/v1/real-estate/changes): of the deals of the answer's district (with "
                "its renumbering aliases; every district for answers without one), or of "
                "their index values for indices. It moves exactly when that data changes, "
                'never for another district\'s load; the ETag starts with it (W/"v12-..."). '
                "Pin a figure by storing it with the figure. Null before any change (0 for "
                "data loaded before change records existed). CSV: X-Svc-Data-Version.",
                minimum=0,
            )
        ),
        "ranked": integer(
            "compare only: the districts with a rank (a value of the sort field).", minimum=0
        ),
        "without_figures": counts(
            "compare only: the districts without figures, by reason (not_loaded, "
            "too_few_transactions, unknown_district)."
        ),
        "incomplete_districts": array(
            string(),
            "compare only: the districts whose figures say complete: false (a month of the "
            "period not loaded completely).",
        ),
        "methodology": string(
            "pulse, series and coverage: how rows are counted: contracts, not rows (the "
            "units of one bulk sale are one contract, entering the figures once with its "
            "total price and total area)."
        ),
        "incomplete_periods": array(
            string(),
            "pulse and series: the months (YYYY-MM, sorted) within the rows' periods that "
            "are not loaded completely for a row's district and types: never loaded, "
            "loaded from an incomplete set of pages, or partially synced; the rows they "
            "belong to say complete: false. coverage: the periods with data built from a "
            "district-month known to be incomplete, sorted. CSV: X-Svc-Incomplete-Periods.",
        ),
        "request_id": string(),
    },
    required=(
        "service",
        "api_version",
        "vertical",
        "tier",
        "auth_method",
        "data_sources",
        "coverage_estimate",
        "coverage_estimate_method",
        "coverage_note",
        "lease_data_status",
        "lease_data_note",
        "known_limitations",
        "disclosure_url",
        "confidence",
        "source_mix",
        "generated_at",
        "count",
        "rate_limit",
        "request_id",
    ),
    description="The layer envelope (_meta) of every real-estate response.",
)
PULSE_PROPERTIES = served_schemas()
"""A pulse row's properties, per-area fields under both units' names (``svc_core.realestate.pulse_row``)."""
PER_AREA_SUFFIXES = tuple(suffix(unit) for unit in AREA_UNITS)
PULSE_ROW = obj(
    PULSE_PROPERTIES,
    required=[name for name in PULSE_PROPERTIES if not name.endswith(PER_AREA_SUFFIXES)],
    description="Quartile aggregates of one cohort and period. Prices are sale prices for "
    "sale and deposits for leases. The per-area fields are named for the answer's "
    "area_unit: *_per_m2 by default, *_per_pyeong with area_unit=pyeong (never both).",
)
PULSE_ROW["oneOf"] = [
    {
        "required": [name for name in PULSE_PROPERTIES if name.endswith(suffix(unit))],
        "description": f"area_unit={unit}",
    }
    for unit in AREA_UNITS
]
TRANSACTION_RECORD = attrs_schema(
    TransactionRecord,
    description="One transaction as the source published it. Excluded records never "
    "enter any figure. The fields after excluded_reason are what the source publishes of "
    "the contract and its parties: null when blank, and a blank on a contract dated "
    "before the field was collected means not collected, not no; cancellation_date, last, "
    "is the cancellation's date.",
)
CONTRACT_RECORD = attrs_schema(
    ContractRecord,
    description="One contract (group=contract): the records a bulk sale of several units "
    "is reported as, together. Fields up to buyer_type are shared by every record of the "
    "contract; the rest add up over its units.",
)
COMPARE_ROW = attrs_schema(
    CompareRow,
    description="One district of a comparison: its rank by the sort field and its pulse "
    "row's figures (per m² and per pyeong), or the reason it has none.",
)
COVERAGE_ROW = attrs_schema(
    CoverageRow,
    description="Which periods have data (at least 2 contracts) for one cohort.",
)
INDEX_ROW = attrs_schema(
    IndexRow,
    description="One R-ONE market statistic for a district (or a market area's own code) "
    "and period. survey_class, era, source_table, floor and unit are additions after SPEC's "
    "fields; net_operating_income (R-ONE's 순영업소득, thousand won per m²) and "
    "floor_utility_ratio (효용비율, a percentage, one per floor) are metrics added to "
    "SPEC's, given only when metric_type names them.",
)
DIMENSION_ITEM = attrs_schema(CodedCount, required=field_schemas(ValueCount))
RE_DIMENSIONS = obj(
    {
        "sigungus": array(
            ref("DimensionItem"), "Districts with transactions; code is a sigungu_code."
        ),
        "gu_dongs": array(ref("DimensionItem"), "'<gu> > <dong>'; filled for geo_precision=dong."),
        "property_types": array(ref("DimensionItem")),
        "transaction_types": array(ref("DimensionItem")),
        "building_types": array(
            ref("DimensionItem"),
            "whole_building and unit (and unknown: deals whose source does not say).",
        ),
        "lease_kinds": array(
            ref("DimensionItem"),
            "Leases per kind: new and renewal (and unknown: leases whose source does not say).",
        ),
        "deal_types": array(
            ref("DimensionItem"),
            "Sales per deal type: brokered and direct (and unknown: sales contracted before "
            "RTMS published it, 2021-11).",
        ),
        "buyer_types": array(
            ref("DimensionItem"),
            "Sales per buyer type: individual, company, public_body and other (and unknown: "
            "sales contracted before RTMS published it, 2024-01).",
        ),
        "building_uses": array(
            ref("BuildingUseItem"),
            "The building uses (RTMS buildingUse, 용도, as published) behind each property "
            "type, most samples first: what office, retail, commercial_complex and "
            "especially mixed_use (기타, 교육연구, 숙박, 의료, uses of several groups) hold.",
        ),
        "land_categories": array(
            ref("TypedValueItem"),
            "Land sales per land category (지목, the land_category filter's values).",
        ),
        "zonings": array(
            ref("TypedValueItem"),
            "Deals per zone (용도지역 by its full legal name, the zoning filter's values) of "
            "each property type that publishes one: land, industrial and the commercial "
            "sales.",
        ),
        "industrial_uses": array(
            ref("TypedValueItem"),
            "Factory and warehouse sales per use (factory, warehouse, other; the "
            "industrial_use filter's values).",
        ),
    },
    description="What has data in the last 6 months with data.",
)
TYPED_VALUE_ITEM = attrs_schema(
    TypedCount,
    description="One value of a filter for one property type, with its samples in the window.",
)
BUILDING_USE_ITEM = attrs_schema(
    UseCount,
    description="One published building use of one property type, with its samples in the window.",
)

# marketplace -------------------------------------------------------------------------------

PRICE = nullable(number("KRW in the listing's billing unit; null when withheld."))
MARKET_ROW = obj(
    {
        "region": string(),
        "category": enum(CATEGORIES),
        "period": string(pattern=f"^{MONTH}$"),
        "product_type": nullable(enum(PRODUCT_TYPES, "null: all product types combined.")),
        "avg_price": PRICE,
        "median_price": PRICE,
        "min_price": PRICE,
        "max_price": PRICE,
        "price_p25": PRICE,
        "price_p75": PRICE,
        "sample_size": integer(f"Listings (at least {K_ANONYMITY}).", minimum=K_ANONYMITY),
        "total_views": integer(minimum=0),
        "total_bookings": integer(minimum=0),
        "demand_index": nullable(number("100 = the category's average views per listing.")),
        "booking_conv_rate": nullable(number("total_bookings / total_views.", minimum=0)),
        "occupancy_proxy": nullable(number("Booked / available hours.", minimum=0, maximum=1)),
        "confidence": enum(CONFIDENCE),
    },
    description=f"Aggregates of one marketplace cohort (k-anonymity >= {K_ANONYMITY}).",
)


def answer_meta(fields: dict[str, Schema], required: Iterable[str]) -> Schema:
    """The ``_meta`` of an answer without the layer envelope (marketplace, regions): the
    service, its version and the time, then ``fields``, then the rate limit and the
    request id; all required but the request id and the ``fields`` not in ``required``."""
    return obj(
        {
            "service": string(const="svc"),
            "api_version": string(const="v1"),
            "generated_at": TIMESTAMP,
            **fields,
            "rate_limit": ref("RateLimit"),
            "request_id": string(),
        },
        required=("service", "api_version", "generated_at", *required, "rate_limit"),
    )


MARKET_META = answer_meta(
    {
        "count": integer(minimum=0),
        "confidence": CONFIDENCE_LEVEL,
        "auth_method": enum(("api_key", "session")),
        "query": obj(
            {
                "region": string(),
                "category": enum(CATEGORIES),
                "period": string(),
                "product_type": nullable(enum(PRODUCT_TYPES)),
            }
        ),
    },
    ("count", "confidence", "auth_method", "query"),
)
REGION = attrs_schema(
    RegionRow,
    description="A place found by name or code: a district, an R-ONE market area or a "
    "legal dong (kind), each with what holds it and the call to make next.",
)
REGIONS_META = answer_meta(
    {
        "count": integer("Places in `data`.", minimum=0),
        "total": integer("Places that match, before `limit`.", minimum=0),
        "query": obj(
            {
                "q": string(),
                "limit": integer(minimum=1, maximum=50),
                "kind": nullable(enum(KINDS)),
            }
        ),
        "table": string("Which code table answered."),
        "auth_method": enum(("api_key", "session")),
    },
    ("count", "total", "query", "table", "auth_method"),
)
MARKET_VALUE = obj({"value": string(), "sample_count": integer(minimum=1)})
MARKET_DIMENSIONS = obj(
    {
        "regions": array(ref("MarketDimensionValue")),
        "categories": array(ref("MarketDimensionValue")),
        "periods": array(ref("MarketDimensionValue")),
    }
)
MARKET_DIMENSIONS_META = answer_meta(
    {
        "total_combinations": integer("regions x categories x periods.", minimum=0),
        "auth_method": enum(("api_key", "session")),
    },
    ("total_combinations", "auth_method"),
)

# accounts ------------------------------------------------------------------------------------

ACCOUNT_META = obj(
    {"request_id": string(), "timestamp": TIMESTAMP},
    description="Added to every account response.",
)
USAGE = obj(
    {
        "plan": enum(PLANS),
        "limits": obj(
            {
                "monthly_request_quota": integer(minimum=0),
                "rate_limit_per_minute": integer(minimum=1),
            }
        ),
        "current_period": obj(
            {
                "month": string("UTC month.", pattern=f"^{MONTH}$"),
                "starts_at": TIMESTAMP,
                "resets_at": TIMESTAMP,
                "requests_used": integer("Successful live calls this month.", minimum=0),
                "requests_remaining": integer(minimum=0),
                "percent_used": number(minimum=0, maximum=100),
            }
        ),
        "trial": nullable(
            obj(
                {
                    "is_active": {"type": "boolean"},
                    "trial_ends_at": TIMESTAMP,
                    "days_remaining": integer(minimum=0),
                    "founding_member": {"type": "boolean"},
                }
            )
        ),
        "subscription": obj({"status": nullable(enum(SUBSCRIPTION_STATUSES))}),
        "role": enum(
            ROLES,
            "Addition to SPEC: the caller's role in this consumer. Owners and admins "
            "manage keys, webhooks and the team; members read (their writes get 403).",
        ),
        "daily": array(
            obj(
                {
                    "date": string("UTC day.", format="date"),
                    "calls": integer("Successful live-key calls that day.", minimum=0),
                    "test_calls": integer("Successful test-key calls that day.", minimum=0),
                }
            ),
            "Addition to SPEC: every UTC day of the current month from the 1st through "
            "today, oldest first, zeros included. A day is counted when the call's quota "
            "unit is settled, so the days' `calls` add up to `requests_used` (calls "
            "counted before day counts existed, at the upgrade that added them, have no day).",
            minItems=1,
            maxItems=31,
        ),
        "keys": array(
            ref("KeyUsage"),
            "Addition to SPEC: every key of the consumer with its successful counted "
            "calls this month, oldest key first (live keys' calls add up to "
            "`requests_used`, less calls from before per-key counting).",
        ),
    },
    description="The usage summary of the caller's highest-plan consumer.",
)
REQUEST_LOG_ROW = obj(
    {
        "time": TIMESTAMP,
        "key_id": UUID,
        "key_prefix": nullable(string("The first 16 characters of the key.")),
        "key_label": nullable(string()),
        "method": string(),
        "path": string("Path and query string, at most 512 characters."),
        "status": integer("The HTTP status answered.", minimum=100, maximum=599),
        "error_code": nullable(
            string("The `code` of the error body a failed call got (`INVALID_PARAMS`, ...).")
        ),
        "request_id": string("The X-Request-ID the response carried."),
        "duration_ms": number("Time the server took to answer.", minimum=0),
    },
    description="One call of an API key.",
)
OFFSET_PAGINATION = obj(
    {
        "limit": integer(minimum=1),
        "offset": integer(minimum=0),
        "returned": integer(minimum=0),
    }
)
"""``limit``/``offset`` paging as an account listing answers it (``svc_core.paging``)."""
REQUEST_LOG_PAGE = obj(
    {
        "rows": array(ref("RequestLogRow")),
        "pagination": OFFSET_PAGINATION,
        "retention": obj(
            {
                "days": integer("How long a call is kept.", minimum=1),
                "max_rows": integer("The most calls kept per account.", minimum=1),
            }
        ),
    }
)
KEY_USAGE = obj(
    {
        "key_id": UUID,
        "prefix": string("The first 16 characters of the key."),
        "label": string(),
        "mode": enum(MODES),
        "status": enum(KEY_STATUSES, "The key's status now."),
        "calls": integer(
            "Successful counted calls made with this key this month (updated within "
            "about a second).",
            minimum=0,
        ),
    },
    description="One key's calls this month.",
)
KEY_ROW_PROPERTIES: dict[str, Schema] = {
    "id": UUID,
    "label": string(),
    "prefix": string(
        "The first 16 characters of the key.", pattern="^svc_pk_(live|test)_[0-9a-f]{4}$"
    ),
    "mode": enum(MODES),
    "scope": enum(SCOPES),
    "ip_allowlist": array(string()),
    "status": enum(KEY_STATUSES),
    "created_at": TIMESTAMP,
    "grace_until": nullable(TIMESTAMP),
    "last_used_at": nullable(TIMESTAMP),
}
KEY_ROW = obj(KEY_ROW_PROPERTIES, description="An API key as listed; never the secret.")
KEY_CREATED = obj(
    {**KEY_ROW_PROPERTIES, "key": API_KEY},
    description="A new key: the list row plus the plaintext `key`, shown only once.",
)
KEY_CREATE = body(keys.CREATE_FIELDS)
KEY_PATCH = body(keys.PATCH_FIELDS)
KEY_ROTATE = body(keys.ROTATE_FIELDS)
KEY_ROTATED = obj(
    {
        "data": ref("ApiKeyCreated"),
        "previous": obj(
            {
                "id": UUID,
                "status": enum(
                    ("grace", "expired"),
                    "grace while the old key still works; expired at once when "
                    "grace_period_seconds is 0.",
                ),
                "grace_until": TIMESTAMP,
            }
        ),
        "meta": ref("AccountMeta"),
    }
)
SESSION_CREATE = body(bodies.SESSION_FIELDS)
DEV_SESSION_CREATE = body(bodies.DEV_SESSION_FIELDS)
SESSION = obj(
    {
        "user": obj({"id": UUID, "email": string()}),
        "consumer": nullable(obj({"id": UUID, "plan": enum(PLANS)})),
        "session_expires_at": TIMESTAMP,
        "api_key": API_KEY,
    },
    required=("user", "consumer", "session_expires_at"),
    description="api_key appears only at a first sign-in, which creates a starter consumer.",
)
MEMBER_PROPERTIES: dict[str, Schema] = {
    "id": UUID,
    "user_id": nullable(UUID),
    "email": string(),
    "role": enum(ROLES),
    "status": enum(MEMBER_STATUSES),
    "invited_at": TIMESTAMP,
    "joined_at": nullable(TIMESTAMP),
}
MEMBER = obj(MEMBER_PROPERTIES, description="A team member or pending invitation.")
INVITATION_PROPERTIES: dict[str, Schema] = {
    "id": UUID,
    "consumer_id": UUID,
    "company_name": nullable(string()),
    "account_name": string(
        description="What the account is known by: its company name, else its owner's email."
    ),
    "role": enum(ROLES),
    "invited_at": TIMESTAMP,
}
MEMBER_INVITED = obj(
    {**INVITATION_PROPERTIES, **MEMBER_PROPERTIES, "expires_at": TIMESTAMP},
    description="A new pending invitation: the invitation row, the member fields and when "
    "it expires (after 7 days).",
)
INVITE_CREATE = body(bodies.INVITE_FIELDS)
INVITATION = obj(
    INVITATION_PROPERTIES, description="An invitation addressed to the caller's email."
)
EVENTS = array(enum(SUBSCRIBABLE), "Event types, or * for all.", minItems=1)
ENDPOINT_PROPERTIES: dict[str, Schema] = {
    "id": UUID,
    "url": string(format="uri"),
    "description": nullable(string()),
    "events": EVENTS,
    "filters": obj(
        {
            key: array(string(), f"data.updated only: the {key.replace('_', ' ')} kept.")
            for key in FILTER_KEYS
        },
        required=(),
        description="What data.updated sends this endpoint: a key absent keeps any value.",
    ),
    "status": enum(ENDPOINT_STATUSES),
    "created_at": TIMESTAMP,
}
WEBHOOK_ENDPOINT = obj(
    {
        **ENDPOINT_PROPERTIES,
        "consecutive_failures": integer(minimum=0),
        "disabled_at": nullable(TIMESTAMP),
    },
    description="A webhook endpoint as listed; never the secret.",
)
WEBHOOK_CREATED = obj(
    {
        **ENDPOINT_PROPERTIES,
        "secret_plaintext": string(
            "The signing secret; returned only in this response.", pattern="^whsec_[0-9a-f]{64}$"
        ),
    },
)
WEBHOOK_CREATE = body(bodies.WEBHOOK_FIELDS)
WEBHOOK_PATCH = body(bodies.WEBHOOK_PATCH_FIELDS)
DELIVERY_RESULT = obj(
    {
        "status": enum(DELIVERY_OUTCOMES),
        "http_status": nullable(integer()),
        "duration_ms": nullable(integer(minimum=0)),
        "error": nullable(string()),
    }
)
WEBHOOK_TEST = obj(
    {
        "test": {"type": "boolean", "const": True},
        "event_id": string(pattern="^evt_webhook_test_[0-9a-f]{32}$"),
        "event_type": string(const="webhook.test"),
        "delivery": ref("DeliveryResult"),
    }
)
DELIVERY = obj(
    {
        "id": UUID,
        "event_type": enum(EVENT_TYPES),
        "event_id": string(),
        "status": enum(DELIVERY_OUTCOMES),
        "http_status": nullable(integer()),
        "duration_ms": nullable(integer(minimum=0)),
        "error_message": nullable(string()),
        "attempt_count": integer(minimum=0),
        "created_at": TIMESTAMP,
    },
    description="One delivery attempt; the payload is not listed.",
)
DELIVERY_PAGE = obj(
    {
        "rows": array(ref("Delivery")),
        "pagination": OFFSET_PAGINATION,
        "summary": obj(
            {
                "total_count": integer(minimum=0),
                "delivered_24h": integer(minimum=0),
                "failed_24h": integer(minimum=0),
            }
        ),
    }
)
DELIVERY_DETAIL = obj(
    {
        "id": UUID,
        "endpoint_id": UUID,
        "url": string(format="uri"),
        "event_id": string(),
        "event_type": enum(EVENT_TYPES),
        "trigger": enum(("scheduled", "manual", "resend")),
        "resend_of": nullable(UUID),
        "status": enum(DELIVERY_STATUSES),
        "http_status": nullable(integer()),
        "duration_ms": nullable(integer(minimum=0)),
        "error_message": nullable(string()),
        "response_excerpt": nullable(
            string("The first 2,000 characters of the receiver's reply body.")
        ),
        "created_at": TIMESTAMP,
        "sent_at": nullable(TIMESTAMP),
        "payload": string("The body that was sent: the event as JSON text, byte for byte."),
    },
    description="One delivery with what was sent and what the receiver answered.",
)
WEBHOOK_RESEND = obj(
    {
        "id": UUID,
        "resend_of": UUID,
        "event_id": string(),
        "event_type": enum(EVENT_TYPES),
        "delivery": ref("DeliveryResult"),
    },
    description="The new delivery of the same event and how its attempt went.",
)
ACCOUNT_CHOICE = obj(
    {
        "id": UUID,
        "name": string("The company name, else the owner's email."),
        "plan": string(),
        "role": enum(ROLES),
        "current": boolean("Whether calls with the session cookie act on this account."),
    },
    description="An account the signed-in person belongs to.",
)

# system ---------------------------------------------------------------------------------------

STATUS = obj(
    {
        "status": enum(("ok", "degraded")),
        "checks": array(
            obj(
                {
                    "name": string(),
                    "ok": {"type": "boolean"},
                    "latency_ms": number(minimum=0),
                    "error": string(
                        "Why the probe failed (absent when it did not): e.g. the data "
                        "file is missing or damaged."
                    ),
                },
                required=("name", "ok", "latency_ms"),
            )
        ),
        "checked_at": TIMESTAMP,
    }
)

# webhook events (outbound) --------------------------------------------------------------------

SUBSCRIPTION = obj(
    {
        "id": string(),
        "status": enum(SUBSCRIPTION_STATUSES),
        "current_period_end": nullable(TIMESTAMP),
        "trial_end": nullable(TIMESTAMP),
        "canceled_at": TIMESTAMP,
        "cancel_at_period_end": {"type": "boolean"},
    },
    required=("id", "status", "current_period_end", "trial_end"),
    description="canceled_at and cancel_at_period_end appear on subscription.cancelled.",
)
KEY_EVENT_DATA = obj(
    {
        "key": obj({"id": UUID, "prefix": nullable(string())}),
        "actor": enum(("self", "admin")),
        "event_at": TIMESTAMP,
        "new_key_id": UUID,
        "new_key_prefix": nullable(string()),
        "grace_until": TIMESTAMP,
        "revoked_at": TIMESTAMP,
    },
    required=("key", "actor", "event_at"),
    description="key.rotated adds new_key_id, new_key_prefix and grace_until; key.revoked "
    "adds revoked_at.",
)
QUOTA_EVENT_DATA = obj(
    {
        "usage": obj(
            {
                "current": integer(minimum=0),
                "limit": integer(minimum=1),
                "percent": number(minimum=0),
                "period_starts_at": TIMESTAMP,
            }
        )
    }
)
TEST_EVENT_DATA = obj(
    {
        "test": {"type": "boolean", "const": True},
        "message": string(),
        "sent_at": TIMESTAMP,
        "docs_url": string(format="uri"),
    }
)


def event_envelope(event_type: str, data: Schema) -> Schema:
    """The common payload envelope of one event type."""
    return obj(
        {
            "id": string("Event id; receivers dedupe on it.", pattern="^[A-Za-z0-9_.:-]{1,255}$"),
            "type": string(const=event_type),
            "created": integer("Unix seconds."),
            "data": data,
        }
    )


CHANGE_RECORD = obj(
    {
        "id": integer(
            "The change's id: records are numbered in the order they were committed, so "
            "paging by it never skips one.",
            minimum=1,
        ),
        "changed_at": string("When the load committed (ISO-8601 UTC).", format="date-time"),
        "source": string(
            "The source kind of the records (commercial, officetel-trade, officetel-rent "
            "or other): a change is per source kind, district and month."
        ),
        "load": obj(
            {
                "id": string("The load (ingest_log id): one load may write many changes."),
                "kind": string("What loaded it: an svc ingest kind, demo, or a sync's."),
            }
        ),
        "sigungu_code": string("5-digit district (sigungu) code.", pattern="^[0-9]{5}$"),
        "sigungu": nullable(string("The district's name.")),
        "month": string("The contract month YYYY-MM.", pattern=f"^{MONTH}$"),
        "property_types": array(enum(PROPERTY_TYPES), "The property types of what moved."),
        "transaction_types": array(enum(TRANSACTION_TYPES), "The transaction types of what moved."),
        "added": integer("Deals the load added to the month.", minimum=0),
        "retracted": integer(
            "Deals the load took out: reported as cancelled, or gone from a month read whole.",
            minimum=0,
        ),
        "changed": integer("Deals stored before that got columns a new read found.", minimum=0),
        "digest_before": string(
            "SHA-256 of what the month held before (kept and excluded records, every column).",
            pattern="^[0-9a-f]{64}$",
        ),
        "digest_after": string("The same after the load.", pattern="^[0-9a-f]{64}$"),
        "complete": boolean("Whether the month is now recorded as read whole."),
        "pulse_url": string(
            "The pulse answer whose rows the change moved (the district's month; its "
            "type when the change touched one).",
            format="uri",
        ),
        "transactions_url": string("The month's deals, excluded ones included.", format="uri"),
    },
    description="What one load changed in one source kind, district and month.",
)

SCHEMAS: dict[str, Schema] = {
    "ErrorDetail": ERROR_DETAIL,
    "Error": ERROR,
    "EnvelopeError": ENVELOPE_ERROR,
    "RateLimit": RATE_LIMIT,
    "LayerEnvelope": LAYER_ENVELOPE,
    "PulseRow": PULSE_ROW,
    "TransactionRecord": TRANSACTION_RECORD,
    "ChangeRecord": CHANGE_RECORD,
    "ContractRecord": CONTRACT_RECORD,
    "CompareRow": COMPARE_ROW,
    "CoverageRow": COVERAGE_ROW,
    "IndexRow": INDEX_ROW,
    "DimensionItem": DIMENSION_ITEM,
    "RealEstateDimensions": RE_DIMENSIONS,
    "BuildingUseItem": BUILDING_USE_ITEM,
    "TypedValueItem": TYPED_VALUE_ITEM,
    "MarketPulseRow": MARKET_ROW,
    "MarketMeta": MARKET_META,
    "MarketDimensionValue": MARKET_VALUE,
    "MarketDimensions": MARKET_DIMENSIONS,
    "MarketDimensionsMeta": MARKET_DIMENSIONS_META,
    "Region": REGION,
    "RegionsMeta": REGIONS_META,
    "AccountMeta": ACCOUNT_META,
    "UsageSummary": USAGE,
    "ApiKey": KEY_ROW,
    "RequestLogRow": REQUEST_LOG_ROW,
    "RequestLogPage": REQUEST_LOG_PAGE,
    "KeyUsage": KEY_USAGE,
    "ApiKeyCreated": KEY_CREATED,
    "ApiKeyCreate": KEY_CREATE,
    "ApiKeyPatch": KEY_PATCH,
    "ApiKeyRotate": KEY_ROTATE,
    "ApiKeyRotated": KEY_ROTATED,
    "SessionCreate": SESSION_CREATE,
    "DevSessionCreate": DEV_SESSION_CREATE,
    "Session": SESSION,
    "TeamMember": MEMBER,
    "TeamInvite": MEMBER_INVITED,
    "TeamInviteCreate": INVITE_CREATE,
    "Invitation": INVITATION,
    "WebhookEndpoint": WEBHOOK_ENDPOINT,
    "WebhookEndpointCreated": WEBHOOK_CREATED,
    "WebhookEndpointCreate": WEBHOOK_CREATE,
    "WebhookEndpointPatch": WEBHOOK_PATCH,
    "DeliveryResult": DELIVERY_RESULT,
    "WebhookTest": WEBHOOK_TEST,
    "Delivery": DELIVERY,
    "DeliveryPage": DELIVERY_PAGE,
    "DeliveryDetail": DELIVERY_DETAIL,
    "WebhookResend": WEBHOOK_RESEND,
    "AccountChoice": ACCOUNT_CHOICE,
    "Status": STATUS,
    "Subscription": SUBSCRIPTION,
    "KeyEventData": KEY_EVENT_DATA,
    "QuotaEventData": QUOTA_EVENT_DATA,
    "TestEventData": TEST_EVENT_DATA,
}
