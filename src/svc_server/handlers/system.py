"""Public system endpoints: the status probe and the human-readable pages.

``/disclosure`` is the trust-disclosure page every real-estate ``_meta.disclosure_url``
points at, built from the same constants the API uses, so the page cannot drift from the
answers. (``/pricing`` and ``/`` are in ``svc_server.web.public``.)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

from werkzeug.wrappers import Response

from svc_core import envelope
from svc_core.cohorts import confidence, stats
from svc_core.envelope import DEMO_LIMITATION
from svc_core.realestate import freshness, rent_conversion
from svc_core.realestate.lease_kinds import LEASE_KIND_LIMITATION
from svc_core.sources import rtms
from svc_server.http.context import Ctx
from svc_server.http.responses import json_response
from svc_server.runtime.deps import Deps
from svc_server.services import status

PAGE_CACHE = "public, max-age=3600"


def get_status(ctx: Ctx, deps: Deps) -> Response:
    """GET /api/status: 200 when every probe answers, 503 otherwise."""
    healthy, body = status.check(deps.store, ctx.now)
    return json_response(
        body,
        status=200 if healthy else 503,
        headers={"Cache-Control": "public, s-maxage=10, stale-while-revalidate=30"},
    )


def _page(title: str, body: str) -> Response:
    html = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n"
        "<style>body{font-family:system-ui,sans-serif;max-width:58rem;margin:2rem auto;"
        "padding:0 1rem;line-height:1.5}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}"
        "code{background:#f4f4f4;padding:0 .2rem}</style>\n"
        f"</head>\n<body>\n<h1>{escape(title)}</h1>\n{body}</body>\n</html>\n"
    )
    return Response(
        html.encode("utf-8"),
        mimetype="text/html",
        headers={"Cache-Control": PAGE_CACHE, "X-Content-Type-Options": "nosniff"},
    )


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(cell))}</td>" for cell in row) + "</tr>\n"
        for row in rows
    )
    return f"<table>\n<tr>{head}</tr>\n{body}</table>\n"


def _list(items: Iterable[str]) -> str:
    return "<ul>\n" + "".join(f"<li>{escape(item)}</li>\n" for item in items) + "</ul>\n"


def _lease_rows() -> list[tuple[str, str]]:
    cases = (("office", None), ("officetel", "monthly_lease"), (None, "sale"))
    return [envelope.lease_status(ptype, ttype) for ptype, ttype in cases]


def disclosure_body() -> str:
    """The HTML body of the trust-disclosure page."""
    office = ", ".join(sorted(rtms.OFFICE_USES))
    retail = ", ".join(sorted(rtms.RETAIL_USES))
    parts = [
        "<p>What the real-estate answers of this API are made of, what they leave out, "
        "and how each number is computed. Every response's <code>_meta</code> carries "
        "the same facts in short form.</p>\n",
        "<h2>Sources</h2>\n",
        _table(
            ("data_sources id", "what it is"),
            (
                (
                    "rtms_official",
                    "MOLIT real-transaction reports (RTMS): commercial building sales, "
                    "officetel sales and officetel leases, from the open API or the web "
                    "site's CSV export.",
                ),
                (
                    "rone_official",
                    "Korea Real Estate Board (R-ONE) commercial rental survey: vacancy "
                    "rate, rent index, income yield, capital yield, total return and "
                    "price index per market area and quarter (the /indices endpoint).",
                ),
                (
                    "public_assessment, rone_index_derived, others",
                    "Normalized samples loaded from documented CSV files; the only "
                    "source of lease cohorts for office, retail, commercial_complex "
                    "and mixed_use.",
                ),
            ),
        ),
        "<h2>Coverage and exclusions</h2>\n",
        f"<p>{escape(envelope.coverage_note({}))} <code>coverage_estimate</code> is null "
        f"(method <code>{escape(envelope.COVERAGE_METHOD)}</code>): the share of all deals "
        "that were reported is not known.</p>\n",
        "<p>Cancelled deals (<code>cdealType = O</code>) and partial-share deals "
        "(<code>shareDealingType = 지분</code>) are excluded at ingest and counted; a "
        "deal cancelled after it was loaded is removed when the report with the "
        "cancellation is loaded.</p>\n",
        "<h2>Property types</h2>\n",
        _table(
            ("RTMS building use (buildingUse)", "building type", "property_type"),
            (
                (office, "any", "office"),
                (retail, "집합 (unit in a multi-unit building)", "commercial_complex"),
                (retail, "일반 (whole building) or blank", "retail"),
                ("any other use, or uses of several groups", "any", "mixed_use"),
                ("officetel reports", "", "officetel"),
            ),
        ),
        "<p><code>mixed_use</code> is SPEC's name for what is left, not a claim that the "
        "buildings mix uses: it holds 기타 (other), 교육연구 (education and research), "
        "숙박 (lodging), 의료 (medical) and every other single use besides office and "
        "retail, as well as uses of several groups (업무,판매). Every pulse row says which "
        "published uses it counts (<code>building_use_mix</code>), every record its "
        "<code>building_use</code>, and <code>/dimensions</code> lists the uses behind "
        "each property type (<code>building_uses</code>).</p>\n",
        "<h2>Building types</h2>\n",
        "<p>A whole building (RTMS <code>일반</code>: a building sold entire) and a unit "
        "(<code>집합</code>: one unit of a multi-unit building; officetels are units) are "
        "different goods, so every answer can be filtered by <code>building_type</code> "
        "(<code>whole_building</code> or <code>unit</code>) and says how many of each it "
        "holds (<code>building_type_mix</code>; <code>unknown</code> for deals whose "
        "source does not say, such as the samples CSV). A row without the filter that "
        "mixes both types is never graded <code>high</code> "
        f"(<code>confidence_factors.mixed_building_types</code>: {escape(confidence.MIXED_REASON)}) "
        "and its <code>known_limitations</code> say so.</p>\n",
        "<h2>Prices per area</h2>\n",
        _list(
            (
                "p25_price_per_m2, median_price_per_m2 and p75_price_per_m2 divide each "
                "contract's price by its area first (building area for whole buildings, "
                "unit or exclusive area otherwise; a bulk contract's total price by its "
                "total area), then take the row's quantiles; contracts without an area "
                "are left out.",
                "median_land_price_per_m2 divides by the land area (plottageAr) of whole "
                "buildings only.",
                f"With area_unit=pyeong the same fields are KRW per pyeong: the area is "
                f"divided by {float(stats.M2_PER_PYEONG)} "
                "(m² per pyeong) first, and the fields are named for the unit "
                "(p25_price_per_pyeong, median_price_per_pyeong, p75_price_per_pyeong, "
                "median_land_price_per_pyeong): such an answer carries no *_per_m2 field, "
                "in JSON or CSV.",
            )
        ),
        "<h2>Leases</h2>\n",
        _list(
            (
                "A lease row's per-area figures are deposits per m² "
                "(p25/median/p75_deposit_per_m2); its *_price_per_m2 fields are null.",
                "Converted deposit = deposit + monthly rent x 12 / the statutory "
                "conversion rate in force at the contract date (주택임대차보호법 시행령 "
                "제9조: the lower of 10% and the Bank of Korea base rate + 2%p since "
                "2020-09-29); a chartered lease's is its deposit. The rate table is "
                f"checked through {rent_conversion.rate_table().checked_through}; later "
                "contracts assume the last base rate.",
                f"lease_kind separates new leases from renewals. {LEASE_KIND_LIMITATION}",
            )
        ),
        "<h2>Lease data status</h2>\n",
        _table(("lease_data_status", "meaning"), _lease_rows()),
        "<h2>Statistics</h2>\n",
        _list(
            (
                f"A cohort (district or dong, property type, transaction type, period) "
                f"needs at least {stats.MIN_SAMPLES} contracts; smaller cohorts are "
                "not shown.",
                envelope.CONTRACT_METHODOLOGY,
                "Prices are sale prices for sale and deposits for leases, in whole KRW; "
                "monthly rents only for monthly_lease.",
                "p25, median and p75 use linear interpolation between order statistics "
                "(Hyndman-Fan type 7, the default of numpy and R); averages are exact "
                "means; both are rounded half to even to whole KRW.",
                "avg_area_m2 is the mean area of the contracts that report one, two "
                "decimals: building area for whole buildings, unit area for strata "
                "units, exclusive area for officetels, land area traded for land.",
                "relative_spread = (highest minus lowest per-source mean) / average price.",
                "Rolling windows (last_3m, last_6m, last_12m, last_4q, last_8q) end at "
                "the latest month or quarter that has data, because reports arrive up "
                "to 30 days late.",
                "annualized_cap_rate = value_pct x 4 on quarterly income_yield rows (a "
                "quarterly yield); an annual income_yield row's own value_pct.",
            )
        ),
        "<h2>Confidence</h2>\n",
        f"<p>First matching rule wins (spread limit {confidence.MAX_SPREAD:.0%}, contract "
        f"threshold {confidence.MIN_SAMPLES}: the units of one bulk sale count once):</p>\n",
        _table(
            ("distinct sources", "condition", "confidence"),
            (
                ("2 or more", f"relative_spread <= {confidence.MAX_SPREAD:.0%}", "high"),
                ("2 or more", f"spread above, {confidence.MIN_SAMPLES}+ contracts", "medium"),
                ("2 or more", f"spread above, fewer than {confidence.MIN_SAMPLES}", "low"),
                ("1", f"{confidence.MIN_SAMPLES}+ contracts", "medium"),
                ("1", f"fewer than {confidence.MIN_SAMPLES} contracts", "low"),
            ),
        ),
        "<p>A series reports the worst confidence of its rows.</p>\n",
        "<h2>Complete and provisional</h2>\n",
        _list(
            (
                "complete: false unless every month of a row's period is loaded "
                "completely for its district and types (months_loaded of "
                "months_expected). An RTMS answer comes in pages, each stating the "
                "query's totalCount, and a month counts as loaded once pages holding "
                "every item are loaded; a sync writes a month only when every item is in "
                "(an empty month included). A file that states no paging (the web CSV "
                "export, the samples CSV) loads the months it holds deals of. A month "
                "never loaded is not loaded, never taken as a month without deals: a "
                "period with no month loaded answers 404 with error.reason not_loaded. "
                "_meta.incomplete_periods lists the months not loaded completely.",
                f"provisional: true while a month of the row's period is within "
                f"{freshness.LAG_DAYS} days after its end (deals must be reported within "
                f"{freshness.REPORT_DAYS} days of the contract and are published a day "
                "later), so deals may still be added or cancelled; in practice the "
                "current month and the one before.",
                "_meta.data_as_of is when the data behind the answer last changed: the "
                "latest load or sync that added, cancelled or updated a record of the "
                "answer's district (every district for answers about none). Loading a "
                "file again that holds nothing new does not move it, and loading one "
                "district never moves another's.",
            )
        ),
        "<h2>The deals behind a figure</h2>\n",
        "<p>Every pulse row links to its deals (<code>transactions_url</code>): "
        "<code>/api/v1/real-estate/transactions</code> with the row's filters and its "
        "months (<code>from</code> and <code>to</code>: a rolling window's resolved "
        "months, never <code>last_6m</code>, so the link means the same after later "
        "loads) lists exactly the records the row is computed from, as the source "
        "published them "
        "(date, price or deposit and rent, areas, floor, build year, masked lot number, "
        "building use, the source and the load that stored it), page by page or as one "
        "CSV. With <code>include_excluded=true</code> it adds the records excluded at "
        "ingest, each with its reason (<code>cancelled</code>, "
        "<code>partial_share</code>); they never enter a figure.</p>\n",
        "<h2>Known limitations</h2>\n",
        _list(envelope.BASE_LIMITATIONS),
        "<h2>Demo data</h2>\n",
        f"<p>{escape(DEMO_LIMITATION)} Answers drawn from it say so in "
        "<code>known_limitations</code>.</p>\n",
    ]
    return "".join(parts)


def get_disclosure(ctx: Ctx, deps: Deps) -> Response:
    """GET /disclosure: the page ``_meta.disclosure_url`` points at."""
    return _page("svc real-estate data: disclosure", disclosure_body())
