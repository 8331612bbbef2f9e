"""API-reference text of the public and data operations: system, real estate,
marketplace. Each constant hangs on its route in ``svc_server.app.routes``."""

from __future__ import annotations

from svc_core.json_schema import array, obj, ref
from svc_core.realestate.regions_answer import TABLE_NOTE
from svc_server.http.routing import Operation
from svc_server.openapi.operations import (
    ENVELOPE_EXAMPLE,
    NOT_FOUND_RE,
    NOT_MODIFIED,
    PULSE_EXAMPLE_ROW,
    QUOTA_NOTE,
    data_ok,
    envelope_404,
    error,
    ok,
)

NEXT_LINK_HEADER = {
    "Link": {
        "description": 'The next page as an absolute URL, `<...>; rel="next"`; '
        "absent on the last page.",
        "schema": {"type": "string"},
    }
}
"""The ``Link`` header of a cursor-paged answer (transactions, changes)."""

# system

GET_STATUS = Operation(
    operation_id="getStatus",
    tag="System",
    summary="Health probe",
    description="Runs one timed probe per vertical (real-estate pulse, marketplace pulse) "
    "against the store. Public; edge-cacheable for 10 s (stale-while-revalidate 30 s).",
    responses={
        "200": ok(ref("Status"), "Every probe answered (`status: ok`)."),
        "503": {
            "description": "One or more probes failed (`status: degraded`).",
            "content": {"application/json": {"schema": ref("Status")}},
        },
    },
)

GET_OPEN_API_DOCUMENT = Operation(
    operation_id="getOpenApiDocument",
    tag="System",
    summary="This OpenAPI document",
    description="The OpenAPI 3.1 description of the API, generated from the server's "
    "routing table. Public and cacheable; send If-None-Match with the ETag to get a 304.",
    responses={
        "200": ok({"type": "object"}, "The document."),
        "304": NOT_MODIFIED,
    },
)

# real estate

GET_REAL_ESTATE_PULSE = Operation(
    operation_id="getRealEstatePulse",
    tag="Real estate",
    summary="Quartile aggregates for one district",
    description="Sale prices or lease deposits (and monthly rents) per property type and "
    "transaction type for one district and period, over contracts: the units of one bulk "
    "sale are one contract, entering once with its total price and area (`contract_count`, "
    "`bulk_contracts`; `_meta.methodology`). Cohorts with fewer than 2 contracts are left "
    "out. Per-area prices are named for `area_unit` "
    "(`*_per_m2`, or `*_per_pyeong` with `area_unit=pyeong`, in JSON keys and CSV "
    "columns alike). Each row says whether it is `complete` (every month of its period "
    "loaded completely: `months_loaded` of `months_expected`) and `provisional`, which "
    "building uses it counts (`building_use_mix`) "
    "and links its deals by their months (`transactions_url`); `_meta.data_as_of` and "
    "`_meta.incomplete_periods` (the months not loaded completely; also "
    f"`X-Svc-Data-As-Of` on CSV) say how fresh. {QUOTA_NOTE}",
    responses={
        "200": ok(
            obj({"data": array(ref("PulseRow")), "_meta": ref("LayerEnvelope")}),
            "Rows ordered by period, property type, transaction type and dong.",
            {"data": [PULSE_EXAMPLE_ROW], "_meta": ENVELOPE_EXAMPLE},
        ),
        "404": envelope_404(NOT_FOUND_RE),
    },
)

GET_REAL_ESTATE_PULSE_SERIES = Operation(
    operation_id="getRealEstatePulseSeries",
    tag="Real estate",
    summary="Pulse rows for several periods",
    description="The pulse row shape for up to 12 calendar periods (all months or all "
    "quarters), given as a list or as an inclusive range. `_meta` adds "
    "`periods_requested`, `periods_returned`, `missing_periods` and `unloaded_periods` "
    "(the requested periods with no month loaded completely). Costs one call "
    "whatever the number of periods.",
    responses={
        "200": data_ok("PulseRow", "Rows of the periods that have data."),
        "404": envelope_404(
            "None of the requested periods has a cohort; `missing_periods` lists them all. "
            "`error.reason` is `not_loaded` when none of them has a month loaded "
            "completely (`unloaded_periods` lists them all), else `too_few_transactions`."
        ),
    },
)

GET_REAL_ESTATE_COMPARE = Operation(
    operation_id="getRealEstateCompare",
    tag="Real estate",
    summary="Districts compared",
    description="One row per district for one cohort (property_type and transaction_type "
    "are required) and period: the districts of `sigungu_codes` (at most 50) or every "
    "district in use of a province (`sido`). Each row holds the district's pulse row "
    "figures (the same figures and flags as GET /pulse for that district), per m² and "
    "per pyeong, with its changes over time, ranked by `sort` (the median per m² by "
    "default; `order=desc`, highest first) with the 95% exact order-statistic interval "
    "of the sorted median. A district without figures is listed after the ranked ones "
    "with pulse's reason (`not_loaded`, `too_few_transactions`, `unknown_district`) and "
    "no rank, never dropped. Costs one call of the monthly quota when it succeeds (2xx), "
    "whatever the number of districts.",
    responses={"200": data_ok("CompareRow", "Every district asked for, ranked.")},
)

GET_REAL_ESTATE_COVERAGE = Operation(
    operation_id="getRealEstateCoverage",
    tag="Real estate",
    summary="Which periods have data",
    description="Per cohort, the periods with at least 2 contracts (the units of one bulk "
    "sale are one), ordered by total samples (descending). Rows say `contract_count` and "
    "`bulk_contracts` beside `total_samples`. Without filters: the top cohorts overall. "
    "`building_type` keeps one building type's deals (rows say `building_type` and "
    "`building_type_mix`); rows say `complete` (false when a period with data is built "
    "from a district-month known to be incomplete; coverage lists only periods with data, "
    "so it does not count months never loaded) and `provisional`. An empty "
    f"result is a 200 with empty `data`, never a 404. {QUOTA_NOTE}",
    responses={"200": data_ok("CoverageRow", "Cohorts with data, busiest first.")},
)

GET_REAL_ESTATE_INDICES = Operation(
    operation_id="getRealEstateIndices",
    tag="Real estate",
    summary="R-ONE market statistics",
    description="Vacancy, yields, returns and price indices from the R-ONE survey for "
    "districts mapped from its market areas, and for every market area under its own code "
    "(`A` + its CLS_ID, named by its full name). `annualized_cap_rate` is `value_pct` x 4 "
    "on income_yield rows. Each row says its series: `survey_class`, the `era` of the "
    "table it comes from and the table (`source_table`); by default one row per property "
    "type, metric and period from the preferred series (the linked (시계열) series where "
    "it exists), every series with `series=all`. `rent_level` (천원/㎡ a month), "
    "`net_operating_income` (순영업소득, 천원/㎡ a quarter or a year) and "
    "`floor_utility_ratio` (효용비율, %) rows only when `metric_type` names them; floor "
    "tables' rows carry their `floor`, every row its `unit`. A year gives the annual "
    f"values R-ONE publishes for it besides its quarters. CSV negotiation applies. {QUOTA_NOTE}",
    responses={
        "200": data_ok("IndexRow", "Index values, by period."),
        "404": envelope_404(
            "No index values for the district and period; `error.reason` `not_loaded` "
            "when the store holds no R-ONE value at all (`svc sync rone` with an R-ONE "
            "key loads them), `unknown_district` for a code no district has."
        ),
    },
)

GET_REAL_ESTATE_TRANSACTIONS = Operation(
    operation_id="getRealEstateTransactions",
    tag="Real estate",
    summary="The deals behind a figure",
    description="The individual records a pulse row of the same filters is computed from "
    "(same districts, period, types, building type and dong; dong needs the pro plan or "
    "higher), as the source published them, in a stable order: contract date, then "
    "natural key. Instead of `period`, `from` and `to` name an inclusive range of months "
    "(what a pulse row's `transactions_url` sends, so the link lists the row's deals after "
    "later loads too). Each record names its `contract_id` (the units of one bulk sale "
    "share it), its `building_use` as published and what the source publishes of the "
    "contract and its parties (deal type and "
    "broker district from contracts of 2021-11-01, seller and buyer type from 2024-01-01, "
    "lease kind, term and renewal right from 2021-06-01; a blank before means not "
    "collected). `contract_id` lists one contract's records; `group=contract` returns a "
    "`ContractRecord` per contract instead (its `units`, total price and area, price per "
    "m²), ordered by contract date then contract id; with `include_excluded=true` it is "
    "a 400 INVALID_PARAMS. Pages of `limit` records: pass `_meta.next_cursor` as `cursor` "
    "for the next, or follow the `Link` header; paging through returns each record once. "
    "`include_excluded=true` adds the records the loader excluded (cancelled deals, "
    "partial shares) with their reason, and `_meta.rejected_records` the records rejected "
    "as malformed (an amount such as `27,0000000`) with theirs; they never enter any "
    "figure, and `_meta.rejected_rows` counts the rejected ones per district-month on "
    "every listing. CSV streams the "
    "whole selection (at most 100,000 records; more is a 400 asking to narrow the "
    "filter), with the fields of the records as columns. An empty selection is a 200 "
    "with empty `data`; `_meta.unloaded_periods` (CSV: `X-Svc-Unloaded-Periods`) names "
    "the months of the selection never loaded, where an empty or short listing says "
    "nothing about deals. A code no district has (nor had), with nothing loaded under "
    "it, is a 404 with `error.reason` `unknown_district`. Each page costs one call of the monthly quota when it succeeds "
    "(2xx); a CSV answer costs one.",
    responses={
        "200": {
            **ok(
                obj(
                    {
                        "data": array(
                            {"anyOf": [ref("TransactionRecord"), ref("ContractRecord")]},
                            "TransactionRecord items; ContractRecord items with group=contract.",
                        ),
                        "_meta": ref("LayerEnvelope"),
                    }
                ),
                "One page of records (contracts with group=contract), in listing order.",
            ),
            "headers": NEXT_LINK_HEADER,
        },
        "404": error(
            "NotFound",
            "error.reason unknown_district: no district has (or had) the code, and nothing "
            "was loaded under it.",
        ),
    },
)

GET_REAL_ESTATE_CHANGES = Operation(
    operation_id="getRealEstateChanges",
    tag="Real estate",
    summary="What changed in the data",
    description="The change records, in the order they were committed: one per load "
    "(svc ingest, svc sync rtms, svc demo-data) that changed what a source kind, district "
    "and month holds, with the deals it added, retracted (cancelled, or gone from a month "
    "read whole) and changed, the month's content digest before and after, whether the "
    "month is now complete, and links to the pulse rows it moved (`pulse_url`) and the "
    "month's deals (`transactions_url`). A load that changes nothing writes none. "
    "`since` is the `_meta.next_cursor` of the previous page (or follow the `Link` "
    "header), or `_meta.latest_cursor` of your last answer to poll for what came since "
    "(it is on the last page too), or a time. Paging through returns each record once, "
    "in id order, with none skipped. Filters: `sigungu_code` (with its renumbering "
    "aliases), `property_type` and `transaction_type` (a change that touched that type). "
    "The same records are sent as `data.updated` webhook events. Each page costs one call "
    "of the monthly quota when it succeeds (2xx).",
    responses={
        "200": {
            **ok(
                obj({"data": array(ref("ChangeRecord")), "_meta": ref("LayerEnvelope")}),
                "One page of change records, in id order.",
            ),
            "headers": NEXT_LINK_HEADER,
        }
    },
)

GET_REAL_ESTATE_DIMENSIONS = Operation(
    operation_id="getRealEstateDimensions",
    tag="Real estate",
    summary="Districts and types with data",
    description="The districts, property types and transaction types with transactions "
    "in the last 6 months with data, with sample counts (and the building types: "
    "`building_types`; the published building uses behind each property type: "
    "`building_uses`, e.g. the 기타, 숙박 and 교육연구 buildings `mixed_use` holds; "
    "the land categories, zones and industrial uses per property type: `land_categories`, "
    "`zonings`, `industrial_uses`); `gu_dongs` is filled for "
    f"geo_precision=dong (pro plan or higher). {QUOTA_NOTE}",
    responses={
        "200": ok(
            obj({"data": ref("RealEstateDimensions"), "_meta": ref("LayerEnvelope")}),
            "The filter values, most samples first.",
        )
    },
)

GET_REAL_ESTATE_REGIONS = Operation(
    operation_id="getRealEstateRegions",
    tag="Real estate",
    summary="Find a district, a legal dong or a market area by name or code",
    description="The districts (sigungu) whose code starts with `q` or one of whose names "
    "does: Korean or romanised (Revised Romanization), province and district (`부천`, "
    "`Bucheon`, `강남구`, `Gangnam`, `서울 중구`). Each with its Korean and romanised "
    "names, `sido`, and the days its code was valid: retired codes are included, "
    "flagged `in_use: false`, with `valid_to` and the codes that replaced them "
    "(`replaced_by`). Then the legal dongs (`kind: dong`: `역삼동`, `성수동1가`, "
    "`강남구 역삼동`, a 10-digit code) with the district holding them, and the R-ONE "
    "market areas (`kind: market_area`: `도심`, `강남`, `여의도마포`, a retail area loaded) "
    "with their code and districts; each row's `next` is the call to make next. Places in "
    "use come first, then exact names before prefixes, then districts, market areas, "
    "dongs, then by code; at most `limit` (50). An API key or session is needed and the "
    "rate limit applies, but the call is **not counted against the monthly quota**.",
    responses={
        "200": ok(
            obj({"data": array(ref("Region")), "_meta": ref("RegionsMeta")}),
            "The matching districts (an empty list when none matches).",
            example={
                "data": [
                    {
                        "sigungu_code": "41192",
                        "sido": "경기도",
                        "sigungu": "부천시 원미구",
                        "full_name": "경기도 부천시 원미구",
                        "sido_roman": "Gyeonggi-do",
                        "sigungu_roman": "Bucheon-si Wonmi-gu",
                        "full_name_roman": "Gyeonggi-do Bucheon-si Wonmi-gu",
                        "in_use": True,
                        "valid_from": "2024-01-01",
                        "valid_to": None,
                        "replaced_by": [],
                        "replaces": ["41190"],
                        "match": "prefix",
                        "kind": "district",
                        "dong": None,
                        "market_area": None,
                        "districts": [],
                        "next": "/api/v1/real-estate/pulse?sigungu_code=41192",
                    }
                ],
                "_meta": {
                    "service": "svc",
                    "api_version": "v1",
                    "generated_at": "2026-11-27T04:00:00Z",
                    "count": 1,
                    "total": 1,
                    "query": {"q": "Bucheon Wonmi", "limit": 50, "kind": None},
                    "table": TABLE_NOTE,
                    "auth_method": "api_key",
                    "rate_limit": {"limit_per_min": 60, "remaining": 59},
                    "request_id": "req_01HZX9V7Q2",
                },
            },
        )
    },
)

# marketplace

GET_MARKETS_PULSE = Operation(
    operation_id="getMarketsPulse",
    tag="Marketplace",
    summary="Price and demand of one marketplace cohort",
    description="Price quartiles, views, bookings, demand index and occupancy of one "
    "region, category and month (one product type, or all combined). Suppressed and "
    f"empty cohorts answer the same 404. {QUOTA_NOTE}",
    responses={
        "200": ok(
            obj({"data": array(ref("MarketPulseRow")), "_meta": ref("MarketMeta")}),
            "The cohort's row.",
        ),
        "404": {
            "description": "No published row for the cohort (none, or fewer than 3 "
            "listings, or suppressed).",
            "content": {
                "application/json": {
                    "schema": obj(
                        {"error": ref("ErrorDetail"), "_meta": ref("MarketMeta")},
                    )
                }
            },
        },
    },
)

GET_MARKETS_DIMENSIONS = Operation(
    operation_id="getMarketsDimensions",
    tag="Marketplace",
    summary="Regions, categories and months with data",
    description="Every value with at least one published cohort, with the number of "
    "combinations that include it. The data refreshes daily; cache for 6 hours. "
    f"{QUOTA_NOTE}",
    responses={
        "200": ok(
            obj({"data": ref("MarketDimensions"), "_meta": ref("MarketDimensionsMeta")}),
            "The dimension values.",
        )
    },
)
