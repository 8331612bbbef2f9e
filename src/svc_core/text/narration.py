"""The short text an AI assistant's model reads beside each structured answer of the MCP
tools (``svc mcp``): the figures spelled in 억원/만원 and per 평 (``svc_core.text.spoken``),
the months an answer covers, its incomplete and provisional periods, a dispersion
warning, bulk contracts, and for an empty answer its reason and what was searched.

Pure functions over the API's JSON (``data`` and ``_meta``): the text is built from the
same answer the structured content carries, never from a second query.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl

from svc_core.text import spoken

Json = Mapping[str, Any]

NOT_FOUND = "not_found"
NOT_LOADED = "not_loaded"
TOO_FEW = "too_few"
REASONS: tuple[str, ...] = (NOT_FOUND, NOT_LOADED, TOO_FEW)
"""Why an answer is empty: no such district or type; that period was never loaded;
fewer than the minimum contracts."""
_API_REASONS = {
    "not_loaded": NOT_LOADED,
    "too_few_transactions": TOO_FEW,
    "unknown_district": NOT_FOUND,
}
_EXPLAINED = {
    NOT_FOUND: "nothing matches: no such district, type or record",
    NOT_LOADED: "that period was never loaded for this district, so svc cannot tell "
    "whether it had deals (a month never loaded is not a month without deals)",
    TOO_FEW: "the period is loaded but no cohort has the minimum number of contracts",
}
ROWS_SHOWN = 12
"""Rows spelled out in a text; the structured content always has them all."""


def empty_reason(api_reason: str | None, district_known: bool) -> str:
    """The reason of an empty answer from the API's ``error.reason`` (absent on a 200
    without rows) and whether the district code exists at all."""
    if not district_known:
        return NOT_FOUND
    return _API_REASONS.get(api_reason or "", NOT_FOUND)


def searched(query: Json) -> str:
    """What was searched, as ``name=value`` pairs of the given arguments."""
    pairs = [f"{k}={v}" for k, v in query.items() if v is not None and v != ""]
    return ", ".join(pairs) or "no filters"


def empty_text(reason: str, message: str | None, query: Json) -> str:
    """The text of an empty answer: its reason, the API's message, what was searched."""
    lines = [f"No data (reason: {reason}): {_EXPLAINED[reason]}."]
    if message:
        lines.append(message)
    lines.append(f"Searched: {searched(query)}.")
    return "\n".join(lines)


def _money(row: Json, field: str) -> str | None:
    value = row.get(field)
    return spoken.amount(int(value)) if isinstance(value, int) else None


def _quartiles(row: Json, stem: str, label: str) -> str | None:
    median = _money(row, f"median_{stem}")
    if median is None:
        return None
    text = f"median {label} {median}"
    p25, p75 = _money(row, f"p25_{stem}"), _money(row, f"p75_{stem}")
    if p25 and p75:
        text += f" (p25 {p25}, p75 {p75})"
    warning = spoken.dispersion_warning(row.get(f"p25_{stem}"), row.get(f"p75_{stem}"))
    return f"{text}; {warning}" if warning else text


AREA_OF = {"land": "m² of land", "industrial": "m² of building"}
"""What the per-area figures of a property type are over, where ``per area`` would hide
it: a land deal has no building (its area is the lot's), a factory's price per m² of
building stands next to its price per m² of land."""


def _per_area(row: Json, stem: str, label: str, basis: str | None = None) -> str | None:
    """The median of ``stem`` per area, over ``basis`` (``m² of land``; by default the
    property type's, ``AREA_OF``, else plain ``per area``)."""
    per_m2, per_pyeong = row.get(f"median_{stem}_per_m2"), row.get(f"median_{stem}_per_pyeong")
    basis = basis or AREA_OF.get(str(row.get("property_type")))
    if isinstance(per_m2, int):
        area = f"per {basis}" if basis else "per area"
        return f"median {label} {area} {spoken.unit_price(per_m2)}"
    if isinstance(per_pyeong, int):
        area = f" ({basis.replace('m²', '평')})" if basis else ""
        return f"median {label} 평당{area} {spoken.korean_amount(per_pyeong)} (₩{per_pyeong:,}/평)"
    return None


def _land_price(row: Json) -> str | None:
    """A factory/warehouse row's median price per m² of land (of its whole buildings)."""
    if row.get("property_type") != "industrial":
        return None
    return _per_area(row, "land_price", "price of the whole buildings", "m² of their land")


def _mix_text(mix: object, label: str, shown: int = 6) -> str | None:
    """``uses: factory 5, warehouse 5, other 2``: samples per value, most first."""
    if not isinstance(mix, dict) or not mix:
        return None
    ranked = sorted(mix.items(), key=lambda kv: (-kv[1], kv[0]))
    listed = ", ".join(f"{value} {n}" for value, n in ranked[:shown])
    more = len(ranked) - shown
    return f"{label}: {listed}" + (f" and {more} more" if more > 0 else "")


def _land_mixes(row: Json) -> list[str]:
    """What a land or factory/warehouse row holds: its uses, land categories and zones."""
    ptype = row.get("property_type")
    if ptype not in AREA_OF:
        return []
    parts = [
        _mix_text(row.get("industrial_use_mix"), "deals per use (factory, warehouse, other)"),
        _mix_text(row.get("land_category_mix"), "deals per land category (지목)"),
        _mix_text(row.get("zoning_mix"), "deals per zone (용도지역)"),
    ]
    return [p for p in parts if p]


def place_name(row: Json) -> str:
    """``강남구 역삼동``: the row's district, gu and dong, each word once (a dong row's
    ``gu`` is its district's last word, ``성남시 분당구`` → ``분당구``)."""
    words: list[str] = []
    for field in ("sigungu", "gu", "dong"):
        for word in str(row.get(field) or "").split():
            if word not in words:
                words.append(word)
    return " ".join(words)


def cohort_name(row: Json) -> str:
    """``강남구 역삼동 office sale (unit) 2025-06``: what a row describes."""
    place = place_name(row)
    kind = f"{row.get('property_type')} {row.get('transaction_type')}"
    for field in (
        "building_type",
        "lease_kind",
        "deal_type",
        "buyer_type",
        "industrial_use",
        "land_category",
        "zoning",
    ):
        if row.get(field):
            kind += f" ({row[field]})"
    code = row.get("sigungu_code")
    return f"{place} [{code}] {kind} {row.get('period', '')}".strip()


def _status(row: Json) -> list[str]:
    out = []
    loaded, expected = row.get("months_loaded"), row.get("months_expected")
    if row.get("complete") is False:
        counted = (
            f"only {loaded} of {expected} months of this period are loaded completely"
            if isinstance(loaded, int) and isinstance(expected, int)
            else "not every month of this period is loaded completely"
        )
        out.append(f"INCOMPLETE: {counted}, so figures may miss deals")
    if row.get("provisional"):
        out.append(
            "PROVISIONAL: its latest month is still being reported (RTMS allows 30 days "
            "after signing), so figures will change"
        )
    bulk = row.get("bulk_contracts") or 0
    if bulk:
        largest = row.get("largest_contract_units")
        units = "lots" if row.get("property_type") == "land" else "units"
        sized = f", the largest of {largest} {units}" if isinstance(largest, int) else ""
        out.append(
            f"{bulk} bulk contract(s) (several {units} sold together{sized}) each count "
            "once in the figures"
        )
    return out


_CHANGE_REASONS = {
    "not_loaded": "that period was never loaded",
    "incomplete": "a period is not loaded completely",
    "too_few_transactions": "that period has fewer than 2 contracts",
    "no_value": "a side has no such median",
}


def _percent(value: float) -> str:
    return f"{value:g} %"


def change_text(change: Json | None, label: str) -> str | None:
    """One change of a row's median, as the API states it: ``median up 12 % on 2024-Q2,
    9 contracts against 7: not significant (95% interval -9.4 % to 38.6 %)``; or why it is
    unknown."""
    if not change or not change.get("base_period"):
        return None
    base = change["base_period"]
    pct = change.get("change_pct")
    if pct is None:
        why = _CHANGE_REASONS.get(str(change.get("reason")), str(change.get("reason")))
        return f"{label} change on {base} unknown: {why}"
    moved = "unchanged" if pct == 0 else f"{'up' if pct > 0 else 'down'} {_percent(abs(pct))}"
    text = (
        f"{label} {moved} on {base}, {change.get('contract_count')} contracts against "
        f"{change.get('base_contract_count')}: "
    )
    low, high = change.get("interval_low_pct"), change.get("interval_high_pct")
    if low is None or high is None:
        return text + "not significant (too few contracts for an interval)"
    verdict = "significant" if change.get("significant") else "not significant"
    return text + f"{verdict} (95% interval {_percent(low)} to {_percent(high)})"


def _changes(row: Json) -> list[str]:
    lease = row.get("transaction_type") != "sale"
    label = "median deposit" if lease else "median price"
    area = AREA_OF.get(str(row.get("property_type")), "m²")
    return [
        text
        for field, name in (
            ("change_vs_previous", label),
            ("change_vs_year_ago", label),
            ("change_vs_previous_per_m2", f"{label} per {area}"),
            ("change_vs_year_ago_per_m2", f"{label} per {area}"),
        )
        if (text := change_text(row.get(field), name))
    ]


def row_text(row: Json) -> str:
    """One pulse or series row: deals, contracts, confidence, figures, changes and
    warnings."""
    head = f"{cohort_name(row)}: {row.get('sample_count')} deals"
    if row.get("contract_count") is not None:
        head += f" in {row['contract_count']} contracts"
    head += f", confidence {row.get('confidence')}"
    lease = row.get("transaction_type") != "sale"
    parts = [
        _quartiles(row, "price", "deposit" if lease else "price"),
        _quartiles(row, "monthly_rent", "monthly rent"),
        _quartiles(row, "converted_deposit", "converted deposit"),
        _per_area(row, "deposit" if lease else "price", "deposit" if lease else "price"),
        _land_price(row),
        *_land_mixes(row),
    ]
    return "; ".join([head, *(p for p in parts if p), *_changes(row), *_status(row)]) + "."


def _rows(rows: Sequence[Json], line: Any) -> list[str]:
    out = [f"- {line(r)}" for r in rows[:ROWS_SHOWN]]
    if len(rows) > ROWS_SHOWN:
        out.append(f"- ... and {len(rows) - ROWS_SHOWN} more rows in the structured content.")
    return out


def _window(meta: Json) -> str:
    query = meta.get("query") or {}
    first, last = query.get("window_from"), query.get("window_to")
    if first and last:
        return f"Months covered: {first} to {last}." if first != last else f"Month: {first}."
    return ""


def _footer(meta: Json) -> list[str]:
    out = []
    unloaded = meta.get("unloaded_periods") or []
    if unloaded:
        out.append(
            f"NOT LOADED: {', '.join(unloaded)}: never loaded for this district and these "
            "types, so svc cannot tell whether they had deals (not the same as no deals)."
        )
    loaded_empty = [p for p in meta.get("missing_periods") or [] if p not in unloaded]
    if loaded_empty:
        out.append(f"Loaded but without a cohort of enough contracts: {', '.join(loaded_empty)}.")
    incomplete = meta.get("incomplete_periods") or []
    if incomplete:
        out.append(f"Incomplete periods (not every month loaded): {', '.join(incomplete)}.")
    rejected = meta.get("rejected_rows") or []
    if rejected:
        listed = ", ".join(f"{r.get('count')} in {r.get('month')}" for r in rejected)
        out.append(
            f"REJECTED at load (malformed in the source, in no figure): {listed}; "
            "list_deals with include_excluded=true shows them with their reason."
        )
    if meta.get("data_as_of"):
        out.append(f"Data as of {meta['data_as_of']}.")
    return out


def figures_text(rows: Sequence[Json], meta: Json) -> str:
    """A pulse or series answer: its months, each row, incomplete periods, freshness."""
    lines = [f"{len(rows)} cohorts. {_window(meta)}".strip(), *_rows(rows, row_text)]
    lines.append("Amounts are in won (억 = 100,000,000 원, 만 = 10,000 원).")
    return "\n".join([*lines, *_footer(meta)])


def compare_text(rows: Sequence[Json], meta: Json) -> str:
    """A comparison: the districts in rank order with the sorted value, its interval and
    the year's change, then those without figures and why."""
    query = meta.get("query") or {}
    sort = query.get("sort")

    def line(r: Json) -> str:
        place = f"{r.get('sigungu')} [{r.get('sigungu_code')}]"
        if r.get("reason"):
            return f"{place}: no figures ({r['reason']})"
        value, low, high = r.get("sort_value"), r.get("interval_low"), r.get("interval_high")
        money = sort != "contract_count" and isinstance(value, int)
        shown = spoken.amount(value) if money and isinstance(value, int) else str(value)
        text = f"#{r.get('rank') or '-'} {place}: {sort} {shown}"
        if isinstance(low, int) and isinstance(high, int):
            text += f" (95% interval {spoken.korean_amount(low)} to {spoken.korean_amount(high)})"
        text += f", {r.get('contract_count')} contracts, confidence {r.get('confidence')}"
        year = change_text(r.get("change_vs_year_ago"), "median")
        parts = [text, *([year] if year else []), *_status(r)]
        return "; ".join(parts)

    head = (
        f"{len(rows)} districts compared, {meta.get('ranked')} ranked by {sort} "
        f"({query.get('order')}), {query.get('property_type')} {query.get('transaction_type')} "
        f"{query.get('period')}. {_window(meta)}"
    ).strip()
    lines = [head, *_rows(rows, line)]
    lines.append("Amounts are in won (억 = 100,000,000 원, 만 = 10,000 원).")
    return "\n".join([*lines, *_footer(meta)])


def coverage_text(rows: Sequence[Json], meta: Json) -> str:
    """A coverage answer: each cohort's periods with data, deals and status."""

    def line(r: Json) -> str:
        text = (
            f"{cohort_name(r)}: {r.get('earliest_period')} to {r.get('latest_period')}, "
            f"{r.get('period_count')} periods with data, {r.get('total_samples')} deals"
        )
        return "; ".join([text, *_status(r)]) + "."

    return "\n".join([f"{len(rows)} cohorts with data.", *_rows(rows, line), *_footer(meta)])


def dimensions_text(data: Json) -> str:
    """A dimensions answer: districts with codes, and the types that have data."""
    districts = data.get("sigungus") or []
    lines = [
        "Districts with data: "
        + ", ".join(f"{d['value']} [{d['code']}] ({d['sample_count']} deals)" for d in districts)
    ]
    for field in ("property_types", "transaction_types", "building_types", "lease_kinds"):
        values = data.get(field) or []
        if values:
            listed = ", ".join(f"{v['value']} ({v['sample_count']})" for v in values)
            lines.append(f"{field}: {listed}")
    for field in ("land_categories", "zonings", "industrial_uses"):
        values = data.get(field) or []
        if values:
            listed = ", ".join(
                f"{v['value']} of {v['property_type']} ({v['sample_count']})" for v in values
            )
            lines.append(f"{field}: {listed}")
    return "\n".join(lines)


INDEX_UNITS = {"rent_index": " (index points)", "sale_price_index": " (index points)"}
INDEX_UNITS["rent_level"] = " thousand won per m² (천원/㎡) a month"
INDEX_UNITS["net_operating_income"] = " thousand won per m² (천원/㎡)"
"""The unit of a metric's ``value_pct`` other than a percentage."""


def indices_text(rows: Sequence[Json], meta: Json) -> str:
    """An indices answer: each quarter's value, the survey and the cap-rate method."""

    def line(r: Json) -> str:
        metric = r.get("metric_type")
        text = f"{r.get('sigungu')} [{r.get('sigungu_code')}] {r.get('property_type')} "
        text += (
            f"{metric} {r.get('period')}: {r.get('value_pct')}{INDEX_UNITS.get(str(metric), '%')}"
        )
        if r.get("floor"):
            text += f" (floor {r['floor']})"
        if r.get("annualized_cap_rate") is not None:
            text += f" (annualized cap rate {r['annualized_cap_rate']}%)"
        series = [f"class {r['survey_class']}"] if r.get("survey_class") else []
        if r.get("era"):
            series.append(f"era {r['era']}")
        if series:
            text += f" [{', '.join(series)}]"
        return text

    query = meta.get("query") or {}
    lines = [
        "Source: R-ONE (Korea Real Estate Board) commercial rental survey "
        f"(상업용부동산 임대동향조사), quarterly; quarters {query.get('window_from')} to "
        f"{query.get('window_to')}. The survey is published per era of its sample design; "
        "each value names its survey class and era (시계열: the board's linked series, "
        "preferred where it exists), so compare values of different eras with care.",
        *_rows(rows, line),
    ]
    if meta.get("cap_rate_method"):
        lines.append(f"Cap-rate method: {meta['cap_rate_method']}")
    return "\n".join([*lines, *_footer(meta)])


def deal_text(deal: Json) -> str:
    """One transaction record: date, place, type, amounts and area."""
    place = place_name(deal)
    kind = f"{deal.get('property_type')} {deal.get('transaction_type')}"
    if deal.get("building_type"):
        kind += f" ({deal['building_type']})"
    amounts = [
        f"{label} {spoken.amount(int(deal[field]))}"
        for field, label in (
            ("price_krw", "price"),
            ("deposit_krw", "deposit"),
            ("monthly_rent_krw", "monthly rent"),
        )
        if isinstance(deal.get(field), int)
    ]
    units = deal.get("units")
    if isinstance(units, int) and units > 1:
        amounts.append(f"bulk contract of {units} units")
    area = deal.get("building_area_m2") or deal.get("exclusive_area_m2")
    if area:
        amounts.append(f"{area} m²")
    text = f"{deal.get('contract_date')} {place} {kind}: " + ", ".join(amounts)
    if deal.get("excluded_reason"):
        text += f" [EXCLUDED: {deal['excluded_reason']}]"
    return text


def deals_text(rows: Sequence[Json], meta: Json) -> str:
    """A page of transaction records, and how to get the next one."""
    lines = [f"{len(rows)} records on this page.", *_rows(rows, deal_text)]
    cursor = meta.get("next_cursor")
    lines.append(
        f"More records: call list_deals again with the same arguments and cursor={cursor}"
        if cursor
        else "This is the last page."
    )
    rejected = meta.get("rejected_records") or []
    lines += [
        f"- REJECTED {r.get('month')} [{r.get('sigungu_code')}] "
        f"{r.get('property_type') or 'unknown type'}: {r.get('detail')} "
        f"(reason {r.get('rejected_reason')}; {r.get('source_file')}, {r.get('source_line')})"
        for r in rejected[:ROWS_SHOWN]
    ]
    return "\n".join([*lines, *_footer(meta)])


NEXT_TOOLS = {"pulse": "market_pulse", "indices": "indices", "coverage": "coverage"}
"""The tool that makes a regions row's ``next`` call, by the endpoint's last path part."""


def next_call(url: str) -> str:
    """A regions row's ``next`` (``/api/v1/real-estate/pulse?sigungu_code=11680``) as the
    tool call a model makes: ``market_pulse with sigungu_code=11680``."""
    path, _, query = url.partition("?")
    tool = NEXT_TOOLS.get(path.rsplit("/", 1)[-1], path)
    arguments = ", ".join(f"{k}={v}" for k, v in parse_qsl(query))
    return f"{tool} with {arguments}" if arguments else tool


def regions_text(rows: Sequence[Json]) -> str:
    """Places found: districts (names, codes, validity of retired codes, their market
    area), legal dongs (with the district holding them) and R-ONE market areas (with
    their code and districts), each with the tool call to make next."""

    def district(r: Json) -> str:
        text = f"{r.get('full_name')} ({r.get('full_name_roman')}): code {r.get('sigungu_code')}"
        if r.get("in_use") is False:
            text += f", retired: valid {r.get('valid_from')} to {r.get('valid_to')}"
            if r.get("replaced_by"):
                text += f", replaced by {', '.join(r['replaced_by'])}"
        if r.get("replaces"):
            text += f" (replaces {', '.join(r['replaces'])})"
        return text

    def line(r: Json) -> str:
        dong = r.get("dong") or {}
        if r.get("kind") == "dong":
            text = f"Legal dong {dong.get('name')} ({dong.get('name_roman')}), code "
            text += f"{dong.get('dong_code') or 'not in the bundled list'}, in {district(r)}"
            if dong.get("in_use") is False:
                text += f"; the dong was retired {dong.get('valid_to') or 'after 2022-09-01'}"
                if dong.get("replaced_by"):
                    text += f", replaced by {', '.join(dong['replaced_by'])}"
        elif r.get("kind") == "market_area":
            code = r.get("sigungu_code") or "none yet (its values are not loaded)"
            text = f"R-ONE market area {r.get('full_name')}: code {code}"
            if r.get("districts"):
                text += f", standing for districts {', '.join(r['districts'])}"
        else:
            text = district(r)
            if r.get("market_area"):
                text += f"; R-ONE market area {r['market_area']}"
        return f"{text}. Next: {next_call(r['next'])}" if r.get("next") else text

    head = "One place matches." if len(rows) == 1 else f"{len(rows)} candidates:"
    return "\n".join([head, *_rows(rows, line)])
