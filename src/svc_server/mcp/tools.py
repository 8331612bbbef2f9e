"""The MCP tools: each one is one ``GET`` of an ``/api/v1/real-estate`` endpoint, its
arguments that endpoint's query parameters (the same ``Param`` declarations validate
them and give the input schema, so tool and API cannot disagree), its answer the API's
``data`` and ``_meta`` plus a short text for the model (``svc_core.text.narration``).

No SDK here: ``call`` turns arguments into one API call through a ``Backend`` and the
reply into a ``ToolAnswer`` (structured content, text, error flag); ``svc_server.mcp.server``
hands tools and answers to the MCP SDK.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import httpx

from svc_core import regions
from svc_core.errors import InvalidParams, SvcError
from svc_core.params import Param
from svc_core.realestate import compare as re_compare
from svc_core.realestate import listing
from svc_core.realestate import query as re_query
from svc_core.realestate.regions_answer import REGIONS_PARAMS
from svc_core.text import narration
from svc_server.mcp.backends import Backend, Reply
from svc_server.openapi import param_object

RE = "/api/v1/real-estate"
DEALS_PER_CALL = 50
Json = dict[str, Any]
Narrator = Callable[[Any, Mapping[str, Any]], str]


@attrs.frozen(kw_only=True)
class Tool:
    """One tool: its name, the endpoint it calls, the parameters it takes (``renamed``
    maps a tool argument to the API's name for it) and how its answer is told."""

    name: str
    title: str
    path: str
    params: tuple[Param, ...]
    description: str
    narrate: Narrator
    renamed: Mapping[str, str] = attrs.field(factory=dict)
    defaults: Mapping[str, str] = attrs.field(factory=dict)

    def input_schema(self) -> Json:
        """The JSON Schema of the arguments, from the parameter declarations."""
        properties: Json = {}
        for param in self.params:
            declared = param_object(param)
            properties[param.name] = {**declared["schema"], "description": param.description}
        return {
            "type": "object",
            "properties": properties,
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }


def _named(param: Param, name: str, description: str) -> Param:
    return attrs.evolve(param, name=name, description=description)


def _deal_limit() -> Param:
    return attrs.evolve(
        listing.LIMIT,
        high=DEALS_PER_CALL,
        default=DEALS_PER_CALL,
        description=f"Records per call, 1 to {DEALS_PER_CALL} (default {DEALS_PER_CALL}).",
    )


SAME = (
    " Every figure is computed over cleaned contracts (cancelled deals and partial shares "
    "excluded, a bulk sale of several units counted once); amounts are whole won."
)
TOOLS: tuple[Tool, ...] = (
    Tool(
        name="find_district",
        title="Find a district code",
        path=f"{RE}/regions",
        params=(
            _named(REGIONS_PARAMS[0], "query", REGIONS_PARAMS[0].description),
            *REGIONS_PARAMS[1:],
        ),
        renamed={"query": "q"},
        description="Find the 5-digit district (시군구) code every other tool needs, from a "
        "Korean or romanised name or an old or new code (`부천`, `Gangnam`, `서울 중구`, "
        "`41190`); a legal dong (`역삼동`, `성수동1가`) with the district holding it; or an "
        "R-ONE market area (`도심`, `강남`, `여의도마포`) with its code for the indices tool. "
        "Answers every candidate when the name is ambiguous, for a retired code its "
        "validity dates and the codes that replaced it, and for each the tool call to make "
        "next. Call this first when you only know a place's name.",
        narrate=lambda data, meta: narration.regions_text(data),
    ),
    Tool(
        name="market_pulse",
        title="Market pulse of a district",
        path=f"{RE}/pulse",
        params=re_query.PULSE_PARAMS,
        description="Price and rent figures (deal count, median and quartiles, per-m² "
        "prices, confidence) of a district's commercial real estate, factories and "
        "warehouses (industrial: per m² of building and of land, with the use mix) and land "
        "(per m² of land, with its land categories and zones) for one period, per "
        "property and transaction type; filter by building type, lease kind, deal or "
        "buyer type, industrial use, land category (지목), zone (용도지역), per-area unit, "
        "and (on the pro plan) a legal dong. Each median's "
        "change against the previous period and a year earlier is stated with both "
        "sides' contracts and whether its 95% interval excludes zero." + SAME,
        narrate=narration.figures_text,
    ),
    Tool(
        name="market_series",
        title="Market series of a district",
        path=f"{RE}/pulse/series",
        params=re_query.SERIES_PARAMS,
        description="The same figures as market_pulse for consecutive periods (months, "
        "quarters or years) of a district, to see a trend." + SAME,
        narrate=narration.figures_text,
    ),
    Tool(
        name="compare_districts",
        title="Districts compared",
        path=f"{RE}/compare",
        params=re_compare.COMPARE_PARAMS,
        description="Rank districts (a list of codes, or every district of a province "
        "such as 서울) by one figure of one cohort (property_type and transaction_type are "
        "required): the median per m² by default, with its 95% interval, contracts, "
        "confidence, completeness and the change against a year earlier. A district "
        "without figures is listed with its reason (not_loaded, too_few_transactions)." + SAME,
        narrate=narration.compare_text,
    ),
    Tool(
        name="coverage",
        title="What data a district has",
        path=f"{RE}/coverage",
        params=re_query.COVERAGE_PARAMS,
        description="Which periods have data for a district (or every district), per "
        "property and transaction type, with deal counts and whether the periods are "
        "completely loaded. Call it before asking for figures of a period you are unsure of.",
        narrate=narration.coverage_text,
    ),
    Tool(
        name="dimensions",
        title="Districts and types with data",
        path=f"{RE}/dimensions",
        params=re_query.DIMENSIONS_PARAMS,
        description="The districts (with codes), property types, transaction types, "
        "building types and lease kinds that have data, with deal counts.",
        narrate=lambda data, meta: narration.dimensions_text(data),
    ),
    Tool(
        name="indices",
        title="R-ONE market indices",
        path=f"{RE}/indices",
        params=re_query.INDICES_PARAMS,
        description="The Korea Real Estate Board's (R-ONE) quarterly commercial rental "
        "survey for a district: rents, vacancy and income yield, with the annualized "
        "cap rate and how it is computed.",
        narrate=narration.indices_text,
    ),
    Tool(
        name="list_deals",
        title="The deals behind a figure",
        path=f"{RE}/transactions",
        params=(*(p for p in listing.TRANSACTIONS_PARAMS if p.name != "limit"), _deal_limit()),
        defaults={"limit": str(DEALS_PER_CALL)},
        description="The individual transaction records behind a figure (a market_pulse "
        f"row's district, types and months), at most {DEALS_PER_CALL} a call: pass the "
        "answer's next_cursor as cursor to get the next page, with the same other "
        "arguments.",
        narrate=narration.deals_text,
    ),
)
BY_NAME = {t.name: t for t in TOOLS}


@attrs.frozen
class ToolAnswer:
    """What a tool call answers: structured content, the model's text, an error flag."""

    structured: Json
    text: str
    is_error: bool = False


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _not_a_code(tool: Tool, query: Mapping[str, str]) -> InvalidParams | None:
    """The refusal of a ``sigungu_code`` that is not a code (a name such as ``강남구``):
    the model is told to call find_district, the one tool that turns names into codes."""
    raw = query.get("sigungu_code")
    param = next((p for p in tool.params if p.name == "sigungu_code"), None)
    if raw is None or param is None or param.pattern is None:
        return None
    if re.fullmatch(param.pattern, raw.strip(), re.ASCII):
        return None
    return InvalidParams(
        f"sigungu_code {raw!r} is not a district code: {tool.name} needs the 5-digit code "
        "(such as 11680 for 강남구).",
        hint=f"Call find_district with query={raw!r} to get its code, then call "
        f"{tool.name} again with sigungu_code set to it.",
    )


_HTTP_HINTS = (
    (
        "GET /api/v1/real-estate/dimensions?geo_precision=dong",
        "the dimensions tool with geo_precision=dong",
    ),
    ("GET /api/v1/real-estate/dimensions", "the dimensions tool (or find_district by name)"),
    ("GET /api/v1/real-estate/regions", "find_district"),
    ("GET /api/v1/real-estate/coverage", "the coverage tool"),
    ("/api/v1/real-estate/dimensions", "the dimensions tool"),
    ("/api/v1/real-estate/coverage", "the coverage tool"),
)
"""HTTP references of the API's messages and the tools a model calls instead."""


def for_model(text: str | None) -> str | None:
    """An API message or hint as a model reads it: endpoints named as the tools that
    call them."""
    if text is None:
        return None
    for http, tool in _HTTP_HINTS:
        text = text.replace(http, tool)
    return text


def api_query(tool: Tool, arguments: Mapping[str, Any]) -> dict[str, str]:
    """The API query of a call's arguments, each checked by its declaration (an unknown
    or malformed argument is ``InvalidParams``, and no call is made; a name given as
    ``sigungu_code`` points at find_district)."""
    declared = {p.name: p for p in tool.params}
    unknown = sorted(set(arguments) - set(declared))
    if unknown:
        raise InvalidParams(
            f"Unknown argument {unknown[0]!r}.",
            hint=f"Arguments of {tool.name}: {', '.join(declared)}.",
        )
    query = dict(tool.defaults)
    for name, value in arguments.items():
        if value is None:
            continue
        if isinstance(value, dict | list):
            raise InvalidParams(f"Argument {name!r} must be a single value.")
        query[name] = _text(value)
    refused = _not_a_code(tool, query)
    if refused is not None:
        raise refused
    for param in tool.params:
        param.read(query)
    return {tool.renamed.get(k, k): v for k, v in query.items()}


def error_answer(err: Mapping[str, Any], status: int | None = None) -> ToolAnswer:
    """A tool error carrying the API's error code, message and hint."""
    head = f"{err.get('code')}" + (f" (HTTP {status})" if status else "")
    lines = [f"Error {head}: {for_model(err.get('message'))}"]
    if err.get("hint"):
        lines.append(f"Hint: {for_model(err['hint'])}")
    return ToolAnswer({"error": dict(err)}, "\n".join(lines), is_error=True)


def _svc_error(err: SvcError) -> ToolAnswer:
    return error_answer({"code": err.code, "message": err.message, "hint": err.hint})


def _district_known(query: Mapping[str, str]) -> bool:
    code = query.get("sigungu_code")
    return code is None or regions.region(code) is not None


def empty_answer(
    arguments: Mapping[str, Any], query: Mapping[str, str], reply: Reply
) -> ToolAnswer:
    """An answer without data: the reason, the API's message and what was searched."""
    body = reply.body if isinstance(reply.body, dict) else {}
    err = body.get("error") or {}
    meta = body.get("_meta") or {}
    known = _district_known(query)
    api_reason = err.get("reason")
    unloaded = meta.get("unloaded_periods") or []
    if api_reason is None and unloaded:
        api_reason = narration.NOT_LOADED  # a listing answers 200 and names its months
    reason = narration.empty_reason(api_reason, known)
    message = for_model(err.get("message"))
    if unloaded and reason == narration.NOT_LOADED:
        message = (
            f"Never loaded: {', '.join(unloaded)} (svc sync rtms or svc ingest loads them)."
            if message is None
            else message
        )
    if not known:
        message = (
            f"No district has the code {query.get('sigungu_code')}: find_district finds codes."
        )
    empty = {"reason": reason, "message": message, "searched": dict(arguments)}
    structured = {"data": body.get("data", []), "meta": body.get("_meta"), "empty": empty}
    return ToolAnswer(structured, narration.empty_text(reason, message, arguments))


def answer(
    tool: Tool, arguments: Mapping[str, Any], query: Mapping[str, str], reply: Reply
) -> ToolAnswer:
    """The tool's answer to the API's ``reply``."""
    body = reply.body
    if not isinstance(body, dict):
        return error_answer(
            {"code": "BAD_GATEWAY", "message": f"The API answered {reply.status} without JSON."}
        )
    if reply.status == 404 and (body.get("error") or {}).get("code") == "NOT_FOUND":
        return empty_answer(arguments, query, reply)
    if not 200 <= reply.status < 300:
        return error_answer(body.get("error") or {}, reply.status)
    data, meta = body.get("data"), body.get("_meta") or {}
    if isinstance(data, list) and not data:
        return empty_answer(arguments, query, reply)
    structured = {"data": data, "meta": meta, "usage": usage(reply.headers)}
    return ToolAnswer(structured, tool.narrate(data, meta))


def usage(headers: Mapping[str, str]) -> Json:
    """The call's quota and rate-limit headers, as the API sent them."""
    names = ("x-quota-used", "x-quota-limit", "x-ratelimit-remaining", "x-ratelimit-limit")
    return {n.removeprefix("x-").replace("-", "_"): headers[n] for n in names if n in headers}


def call(backend: Backend, name: str, arguments: Mapping[str, Any]) -> ToolAnswer:
    """Run tool ``name``: check the arguments, make its one API call, tell the answer."""
    tool = BY_NAME.get(name)
    if tool is None:
        return error_answer(
            {
                "code": "NOT_FOUND",
                "message": f"No tool named {name!r}.",
                "hint": f"Tools: {', '.join(BY_NAME)}.",
            }
        )
    try:
        query = api_query(tool, arguments)
    except SvcError as err:
        return _svc_error(err)
    try:
        reply = backend.get(tool.path, query)
    except httpx.HTTPError as err:
        return error_answer(
            {
                "code": "UNREACHABLE",
                "message": f"The svc API could not be reached: {err}",
                "hint": "Check the --url given to svc mcp and that the server runs.",
            }
        )
    return answer(tool, arguments, query, reply)
