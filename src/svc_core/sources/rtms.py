"""MOLIT RTMS open-API responses (XML or JSON) → transactions.

Five kinds of response:

| kind | API | property type | transaction type | price | area |
|---|---|---|---|---|---|
| ``commercial`` | NrgTrade | see below | ``sale`` | dealAmount | buildingAr |
| ``officetel_trade`` | OffiTrade | ``officetel`` | ``sale`` | dealAmount | excluUseAr |
| ``officetel_rent`` | OffiRent | ``officetel`` | see below | deposit | excluUseAr |
| ``industrial`` | InduTrade | ``industrial`` | ``sale`` | dealAmount | buildingAr |
| ``land`` | LandTrade | ``land`` | ``sale`` | dealAmount | dealArea |

Factory and warehouse sales (InduTrade) carry NrgTrade's 22 fields and are read by the
same rules (building type, land area, parties); their ``buildingUse`` gives
``industrial_use`` (``INDUSTRIAL_USE_OF``: ``공장`` factory, ``창고``/``창고시설`` warehouse,
anything else other). Land sales (LandTrade) carry 16 fields: no building, no seller or
buyer kind; ``jimok`` → ``land_category`` as published, ``dealArea`` → ``area_m2`` and
``land_area_m2`` (the land traded). Every record with a ``landUse`` gets ``zoning``, the
zone's full legal name (``svc_core.sources.land.zone_of``), beside ``land_use`` as
published.

Published details, shown with each record and never summarised: ``buildingUse`` (용도),
``floor``, ``buildYear`` and ``jibun`` as published (a masked ``1**`` stays masked);
blank or malformed values are None and never reject a deal. Excluded deals are kept with
their reason (``ParseResult.excluded``).

Parties and contract, as published (None when blank or unknown, never a rejection):
``dealingGbn`` ``중개거래``/``직거래`` → ``deal_type`` ``brokered``/``direct``; ``slerGbn`` and
``buyerGbn`` ``개인``/``법인``/``공공기관``/``기타`` → ``seller_type``/``buyer_type``
``individual``/``company``/``public_body``/``other``; ``landUse`` → ``land_use``;
``estateAgentSggNm`` → ``broker_district``; ``offiNm`` → ``building_name``. Leases:
``contractType`` ``신규``/``갱신`` → ``lease_kind`` ``new``/``renewal``; ``contractTerm``
``YY.MM~YY.MM`` → ``term_start``/``term_end`` ``YYYY-MM``; ``useRRRight`` ``사용`` →
``renewal_right_used`` True (False for a renewal without it); ``preDeposit`` and
``preMonthlyRent`` (만원) → the previous lease's deposit and rent.

Building type: ``buildingType`` ``일반`` → ``whole_building`` (with ``plottageAr`` as
``land_area_m2``), ``집합`` → ``unit``, blank → None; officetels are ``unit``. Neither
enters the natural key.

Officetel rent: ``monthlyRent`` 0 → ``chartered_lease``, otherwise ``monthly_lease`` with
the rent as ``monthly_rent_krw``.

Commercial property type, from ``buildingUse`` (spaces and a trailing ``시설`` ignored)
and ``buildingType``:

| buildingUse | buildingType | property_type |
|---|---|---|
| ``업무`` | any | ``office`` |
| ``제1종근린생활``, ``제2종근린생활``, ``근린생활``, ``판매`` | ``집합`` | ``commercial_complex`` |
| the same retail uses | ``일반`` or blank | ``retail`` |
| anything else (``숙박``, ``기타``, ``의료``, ``교육연구``, ...) | any | ``mixed_use`` |
| uses of several groups (office / retail / other), e.g. ``업무,판매`` | any | ``mixed_use`` |

Quirks handled: tags matched case-insensitively; the older generation's Korean tags
(``년``, ``월``, ``일``, ``법정동``, ``거래금액``, ``지역코드``, ...) read as their new names,
with a day range such as ``11~20`` read as its first day; ``resultCode`` ``000`` is
success (live answers say ``000``/``OK``; ``00`` is accepted too: the tool that saved some
public sample files wrote it in an envelope of its own); any other ``resultCode`` and the
gateway's ``OpenAPI_ServiceResponse`` root raise ``GatewayError`` with the code; blanks are a single space; amounts are 만원 with thousands separators;
JSON ``item`` may be a list or a single object and ``items`` an empty string. XML with a
DOCTYPE is refused (no entity expansion).

Exclusions, counted by reason in the report: ``cancelled`` (``cdealType`` ``O``) and, for
the datasets whose deals can be shares (``RtmsDataset.partial_shares``: commercial,
industrial, land), ``partial_share`` (``shareDealingType`` ``지분``). A deal that is both is
counted once, as ``cancelled``: a cancelled deal is void whatever its share. The natural
keys of cancelled deals are returned as ``retracted_keys`` (the key ignores the
cancellation fields, so it equals the key the deal had before it was cancelled). A
cancelled deal's ``cdealDay`` (``YY.MM.DD``) is its excluded record's ``cancelled_on``.

Natural key: ``rtms:<kind>:<sigungu>:<YYYY-MM>:<sha256 of the item's fields>:<ordinal>``
where the ordinal counts identical items earlier in the same file. Rejected items are
reported with their 1-based item ordinal as the line.

Long because both RTMS API generations (English and Korean tags), five services and
the XML and JSON envelopes meet in one item mapping; the tables above are its contract.
"""

from __future__ import annotations

import datetime
import functools
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any
from xml.parsers import expat

import attrs

from svc_core.errors import GatewayError, SourceError
from svc_core.models import SIGUNGU_CODE, LoadReport, Transaction
from svc_core.regions import region_name
from svc_core.sources import (
    Collector,
    KeyMaker,
    ParseResult,
    Reject,
    load_json,
    parse_area,
    parse_manwon,
    published_int,
    published_text,
)
from svc_core.sources.datasets import RtmsDataset
from svc_core.sources.land import zone_of

SOURCE = "rtms_official"
OK_CODES = frozenset({"000", "00"})
"""``000`` in live answers; ``00`` only in files a saving tool re-enveloped (accepted)."""

OLD_TAGS: dict[str, str] = {
    "년": "dealyear",
    "월": "dealmonth",
    "일": "dealday",
    "법정동": "umdnm",
    "거래금액": "dealamount",
    "지역코드": "sggcd",
    "시군구": "sggnm",
    "건물주용도": "buildinguse",
    "유형": "buildingtype",
    "층": "floor",
    "건축년도": "buildyear",
    "대지면적": "plottagear",
    "건물면적": "buildingar",
    "용도지역": "landuse",
    "해제여부": "cdealtype",
    "해제사유발생일": "cdealday",
    "구분": "sharedealingtype",
    "거래유형": "dealinggbn",
    "중개사소재지": "estateagentsggnm",
    "지번": "jibun",
    "지목": "jimok",
    "단지": "offinm",
    "단지명": "offinm",
    "전용면적": "excluusear",
    "보증금": "deposit",
    "보증금액": "deposit",
    "월세": "monthlyrent",
    "월세금액": "monthlyrent",
    "계약기간": "contractterm",
    "계약구분": "contracttype",
    "갱신요구권사용": "userrright",
    "종전계약보증금": "predeposit",
    "종전계약월세": "premonthlyrent",
}
"""Older Korean tags → the current tag names (lower case)."""

_KEY_IGNORED = frozenset({"cdealtype", "cdealday"})
_DAY = re.compile(r"([0-9]{1,2})(~[0-9]{1,2})?")
_INT = re.compile(r"[0-9]{1,4}")
_USE_SPLIT = re.compile(r"[,/·+;]")

OFFICE_USES = frozenset({"업무"})
RETAIL_USES = frozenset({"제1종근린생활", "제2종근린생활", "근린생활", "판매"})


BUILDING_TYPE_OF = {"일반": "whole_building", "집합": "unit"}
"""RTMS ``buildingType`` → ``Transaction.building_type`` (officetels are units)."""


BUILDINGS = frozenset({RtmsDataset.COMMERCIAL, RtmsDataset.INDUSTRIAL})
"""The datasets of NrgTrade's fields: buildings with a ``buildingType``."""


def building_type_of(kind: RtmsDataset, raw: str) -> str | None:
    """The building type of a deal of ``kind`` whose ``buildingType`` reads ``raw``
    (land has none)."""
    if kind is RtmsDataset.LAND:
        return None
    if kind not in BUILDINGS:
        return "unit"
    return BUILDING_TYPE_OF.get(raw.strip())


def land_area_of(building_type: str | None, raw: str | None) -> float | None:
    """``plottageAr`` of a whole building; None for units and when blank or malformed
    (the land area never rejects a deal)."""
    if building_type != "whole_building":
        return None
    try:
        return parse_area(raw, "plottagear")
    except Reject:
        return None


def commercial_property_type(building_type: str, building_use: str) -> str:
    """Map RTMS ``buildingType``/``buildingUse`` to a property type (module table)."""
    use = re.sub(r"\s+", "", building_use)
    parts = [p.removesuffix("시설") for p in _USE_SPLIT.split(use) if p]
    groups = {
        "office" if p in OFFICE_USES else "retail" if p in RETAIL_USES else "other" for p in parts
    }
    if groups == {"office"}:
        return "office"
    if groups == {"retail"}:
        return "commercial_complex" if building_type.strip() == "집합" else "retail"
    return "mixed_use"


def building_property_type(kind: RtmsDataset, building_type: str, building_use: str) -> str:
    """The property type of a building sale of ``kind`` (``BUILDINGS``): ``industrial``
    for every factory/warehouse sale, the commercial table's otherwise."""
    if kind is RtmsDataset.INDUSTRIAL:
        return "industrial"
    return commercial_property_type(building_type, building_use)


INDUSTRIAL_USE_OF = {"공장": "factory", "창고": "warehouse"}
"""``buildingUse`` (blanks and a trailing ``시설`` ignored) → ``industrial_use``; any other
use is ``other``."""


def industrial_use_of(building_use: str | None) -> str | None:
    """The ``industrial_use`` of a factory/warehouse sale whose use reads ``building_use``;
    None when it is blank."""
    use = re.sub(r"\s+", "", building_use or "").removesuffix("시설")
    return INDUSTRIAL_USE_OF.get(use, "other") if use else None


def land_fields(kind: RtmsDataset, fields: Mapping[str, str | None]) -> dict[str, Any]:
    """What a deal of ``kind`` says of its land and use (``Transaction`` keyword
    arguments): ``zoning`` for every deal with a ``landUse``, ``industrial_use`` for
    factory/warehouse sales, ``land_category`` for land sales."""
    return {
        "zoning": zone_of(fields.get("landuse")),
        "industrial_use": industrial_use_of(fields.get("buildinguse"))
        if kind is RtmsDataset.INDUSTRIAL
        else None,
        "land_category": published_text(fields.get("jimok"), 20)
        if kind is RtmsDataset.LAND
        else None,
    }


def published_fields(
    kind: RtmsDataset, fields: Mapping[str, str | None], area: float | None
) -> dict[str, Any]:
    """What a deal of ``kind`` publishes beside its place, types, amounts and ``area``
    (``Transaction`` keyword arguments), from its fields by current tag name (lower case;
    the CSV export reader names its columns so): building type, land area (a land sale's
    is its ``area``), use, floor, build year and lot number, then ``published_details``
    and ``land_fields``. Never a rejection."""
    btype = building_type_of(kind, fields.get("buildingtype") or "")
    land_area = area if kind is RtmsDataset.LAND else land_area_of(btype, fields.get("plottagear"))
    return {
        "building_type": btype,
        "land_area_m2": land_area,
        "building_use": published_text(fields.get("buildinguse")),
        "floor": published_int(fields.get("floor"), -99, 999),
        "build_year": published_int(fields.get("buildyear"), 1800, 2100),
        "jibun": published_text(fields.get("jibun")),
        **published_details(fields),
        **land_fields(kind, fields),
    }


DEAL_TYPE_OF = {"중개거래": "brokered", "직거래": "direct"}
PARTY_TYPE_OF = {
    "개인": "individual",
    "법인": "company",
    "공공기관": "public_body",
    "기타": "other",
}
LEASE_KIND_OF = {"신규": "new", "갱신": "renewal"}
_TERM = re.compile(r"([0-9]{2}|[0-9]{4})\.([0-9]{1,2})~([0-9]{2}|[0-9]{4})\.([0-9]{1,2})")


def _term_month(year: str, month: str) -> str | None:
    y = int(year) + (2000 if len(year) == 2 else 0)
    m = int(month)
    return f"{y:04d}-{m:02d}" if 1 <= m <= 12 and 1990 <= y <= 2100 else None


def contract_term(raw: str | None) -> tuple[str | None, str | None]:
    """``contractTerm`` ``YY.MM~YY.MM`` (or with four-digit years) → (start, end) as
    ``YYYY-MM``; (None, None) when blank or malformed."""
    found = _TERM.fullmatch(re.sub(r"\s+", "", raw or ""))
    if found is None:
        return None, None
    start = _term_month(found.group(1), found.group(2))
    end = _term_month(found.group(3), found.group(4))
    return (start, end) if start and end else (None, None)


def published_details(fields: Mapping[str, str | None]) -> dict[str, Any]:
    """The parties and contract fields of a deal (``Transaction`` keyword arguments),
    from its fields by current tag name (lower case): see the module table. Shared by
    the CSV export reader, which maps its columns to these tags."""
    lease_kind = LEASE_KIND_OF.get((fields.get("contracttype") or "").strip())
    right = (fields.get("userrright") or "").strip()
    used: bool | None = True if right == "사용" else False if lease_kind == "renewal" else None
    start, end = contract_term(fields.get("contractterm"))
    return {
        "deal_type": DEAL_TYPE_OF.get((fields.get("dealinggbn") or "").strip()),
        "seller_type": PARTY_TYPE_OF.get((fields.get("slergbn") or "").strip()),
        "buyer_type": PARTY_TYPE_OF.get((fields.get("buyergbn") or "").strip()),
        "land_use": published_text(fields.get("landuse")),
        "broker_district": published_text(fields.get("estateagentsggnm"), 200),
        "building_name": published_text(fields.get("offinm"), 100),
        "lease_kind": lease_kind,
        "term_start": start,
        "term_end": end,
        "renewal_right_used": used,
        "previous_deposit_krw": parse_manwon(fields.get("predeposit") or ""),
        "previous_monthly_rent_krw": parse_manwon(fields.get("premonthlyrent") or ""),
    }


_SPACE = re.compile(r"\s+")


@functools.lru_cache(maxsize=1024)
def canonical_tag(tag: str) -> str:
    """Current lower-case tag name for a tag of either API generation.

    Remembered per tag: a file repeats the same twenty-odd tags on every item.
    """
    stripped = _SPACE.sub("", tag)
    return OLD_TAGS.get(stripped, stripped.lower())


@attrs.frozen(kw_only=True)
class _Envelope:
    result_code: str | None
    result_msg: str
    items: list[dict[str, str] | None]
    total_count: int | None
    page_no: int | None
    num_of_rows: int | None


def _int_or_none(text: str | None) -> int | None:
    if text is None:
        return None
    value = text.strip()
    return int(value) if value.isascii() and value.isdigit() and len(value) < 10 else None


def _gateway_error(fields: Mapping[str, str], path: str) -> GatewayError:
    code = fields.get("returnreasoncode", "").strip() or "?"
    msg = fields.get("errmsg", "").strip() or "error"
    auth = fields.get("returnauthmsg", "").strip()
    detail = f" ({auth})" if auth else ""
    return GatewayError(
        f"API gateway error {code}: {msg}{detail}",
        path=path,
        reason_code=code,
        auth_message=auth,
        error_message=msg,
    )


# XML ---------------------------------------------------------------------------------


def _parse_xml(data: bytes, path: str) -> ET.Element:
    """Parse, refusing DOCTYPE (hence any entity definitions).

    ASCII-compatible text (every RTMS response) goes through ElementTree's C parser
    after a byte check for a DOCTYPE, which can only be spelled ``<!DOCTYPE``; text
    holding NUL bytes (UTF-16 or UTF-32, where that check would not see one) goes
    through expat with a handler that refuses the declaration itself.
    """
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise SourceError("XML with a DOCTYPE is refused", path=path)
    if b"\x00" in data:
        return _parse_xml_guarded(data, path)
    parser = ET.XMLParser()  # noqa: S314 - no DOCTYPE (checked above), so no entities
    try:
        parser.feed(data)
        return parser.close()
    except ET.ParseError as exc:
        raise SourceError(f"malformed XML: {exc}", path=path, line=exc.position[0]) from None


def _parse_xml_guarded(data: bytes, path: str) -> ET.Element:
    """Parse with expat directly, refusing DOCTYPE in whatever encoding it comes."""
    parser = expat.ParserCreate()
    builder = ET.TreeBuilder()

    def refuse(*_: object) -> None:
        raise SourceError("XML with a DOCTYPE is refused", path=path)

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.buffer_text = True
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise SourceError(f"malformed XML: {exc}", path=path, line=exc.lineno) from None
    return builder.close()


def _child(element: ET.Element, name: str) -> ET.Element | None:
    for child in element:
        if child.tag.lower() == name:
            return child
    return None


def _leaves(element: ET.Element) -> dict[str, str]:
    return {canonical_tag(child.tag): child.text or "" for child in element}


def _xml_envelope(data: bytes, path: str) -> _Envelope:
    root = _parse_xml(data, path)
    tag = root.tag.lower()
    if tag == "openapi_serviceresponse":
        header = _child(root, "cmmmsgheader")
        raise _gateway_error(_leaves(header if header is not None else root), path)
    if tag != "response":
        raise SourceError(f"unexpected XML root <{root.tag}>: not an RTMS response", path=path)
    header = _child(root, "header")
    head = _leaves(header) if header is not None else {}
    body = _child(root, "body")
    items: list[dict[str, str] | None] = []
    paging: dict[str, str] = {}
    if body is not None:
        paging = {child.tag.lower(): child.text or "" for child in body if len(child) == 0}
        container = _child(body, "items")
        if container is not None:
            items = [_leaves(item) for item in container if item.tag.lower() == "item"]
    return _Envelope(
        result_code=head["resultcode"].strip() if "resultcode" in head else None,
        result_msg=head.get("resultmsg", "").strip(),
        items=items,
        total_count=_int_or_none(paging.get("totalcount")),
        page_no=_int_or_none(paging.get("pageno")),
        num_of_rows=_int_or_none(paging.get("numofrows")),
    )


# JSON --------------------------------------------------------------------------------


def _lower_keys(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    return {str(k).lower(): v for k, v in value.items()}


def _scalar_text(value: Any) -> str | None:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 18.0 in JSON is "18" in XML: same natural key
    if isinstance(value, int | float):
        return str(value)
    return None


def _json_item(value: Any) -> dict[str, str] | None:
    """An item's fields as text; None when it is not an object of scalars."""
    if not isinstance(value, dict):
        return None
    out: dict[str, str] = {}
    for k, v in value.items():
        text = _scalar_text(v)
        if text is None:
            return None
        out[canonical_tag(str(k))] = text
    return out


def _json_envelope(data: bytes, path: str) -> _Envelope:
    doc = load_json(data, path)
    top = _lower_keys(doc)
    if "openapi_serviceresponse" in top:
        gateway = _lower_keys(top["openapi_serviceresponse"])
        header = _lower_keys(gateway.get("cmmmsgheader", gateway))
        raise _gateway_error({k: _scalar_text(v) or "" for k, v in header.items()}, path)
    if "response" not in top:
        raise SourceError("JSON has no 'response' object: not an RTMS response", path=path)
    response = _lower_keys(top["response"])
    head = _lower_keys(response.get("header"))
    body = _lower_keys(response.get("body"))
    raw_items = body.get("items")
    if isinstance(raw_items, dict):
        raw_items = _lower_keys(raw_items).get("item", [])
    if raw_items in (None, ""):
        raw_items = []
    if isinstance(raw_items, dict):
        raw_items = [raw_items]
    if not isinstance(raw_items, list):
        raise SourceError("JSON 'items' is neither a list, an object nor empty", path=path)
    code = head.get("resultcode")
    return _Envelope(
        result_code=None if code is None else (_scalar_text(code) or "").strip(),
        result_msg=(_scalar_text(head.get("resultmsg")) or "").strip(),
        items=[_json_item(item) for item in raw_items],
        total_count=_int_or_none(_scalar_text(body.get("totalcount"))),
        page_no=_int_or_none(_scalar_text(body.get("pageno"))),
        num_of_rows=_int_or_none(_scalar_text(body.get("numofrows"))),
    )


# Records -----------------------------------------------------------------------------


def _date(item: Mapping[str, str]) -> datetime.date:
    year, month, day = (item.get(k, "").strip() for k in ("dealyear", "dealmonth", "dealday"))
    day_match = _DAY.fullmatch(day)
    if not (_INT.fullmatch(year) and _INT.fullmatch(month) and day_match):
        raise Reject("invalid_date", f"contract date {year!r}/{month!r}/{day!r} is malformed")
    try:
        value = datetime.date(int(year), int(month), int(day_match.group(1)))
    except ValueError:
        raise Reject("invalid_date", f"no such date {year}-{month}-{day}") from None
    if not 1990 <= value.year <= 2100:
        raise Reject("invalid_date", f"contract year {value.year} is out of range")
    return value


def _amount(item: Mapping[str, str], field: str, reason: str) -> int:
    raw = item.get(field, "")
    value = parse_manwon(raw)
    if value is None:
        raise Reject(reason, f"{field} {raw!r} is not an amount in 만원")
    return value


def _types(
    kind: RtmsDataset, item: Mapping[str, str]
) -> tuple[str, str, int, int | None, float | None]:
    """(property_type, transaction_type, price, monthly_rent, area) of an item."""
    if kind in BUILDINGS:
        return (
            building_property_type(kind, item.get("buildingtype", ""), item.get("buildinguse", "")),
            "sale",
            _amount(item, "dealamount", "invalid_amount"),
            None,
            parse_area(item.get("buildingar"), "buildingar"),
        )
    if kind is RtmsDataset.LAND:
        area = parse_area(item.get("dealarea"), "dealarea")
        return "land", "sale", _amount(item, "dealamount", "invalid_amount"), None, area
    area = parse_area(item.get("excluusear"), "excluusear")
    if kind is RtmsDataset.OFFICETEL_TRADE:
        return "officetel", "sale", _amount(item, "dealamount", "invalid_amount"), None, area
    deposit = _amount(item, "deposit", "invalid_amount")
    rent = _amount(item, "monthlyrent", "invalid_rent")
    if rent == 0:
        return "officetel", "chartered_lease", deposit, None, area
    return "officetel", "monthly_lease", deposit, rent, area


def _transaction(kind: RtmsDataset, item: Mapping[str, str], key: str) -> Transaction:
    code = item.get("sggcd", "").strip()
    if SIGUNGU_CODE.fullmatch(code) is None:
        raise Reject("invalid_sigungu_code", f"sggCd {code!r} is not a 5-digit code")
    name = item.get("sggnm", "").strip() or region_name(code)
    if not name:
        raise Reject("unknown_district", f"sggCd {code} has no name and is not in the table")
    deal_date = _date(item)
    prop, ttype, price, rent, area = _types(kind, item)
    dong = item.get("umdnm", "").strip() or None
    try:
        return Transaction(
            source=SOURCE,
            sigungu_code=code,
            sigungu=name,
            dong=dong,
            property_type=prop,
            transaction_type=ttype,
            deal_date=deal_date,
            price_krw=price,
            monthly_rent_krw=rent,
            area_m2=area,
            natural_key=key,
            **published_fields(kind, item, area),
        )
    except ValueError as exc:
        raise Reject("invalid_record", str(exc)) from None


def item_types(
    kind: RtmsDataset, item: Mapping[str, str], key: str = ""
) -> tuple[str | None, str | None]:
    """(property type, transaction type) of an item told without its amounts: a lease
    whose rent does not read has no transaction type."""
    if kind in BUILDINGS:
        use = item.get("buildinguse", "")
        return building_property_type(kind, item.get("buildingtype", ""), use), "sale"
    if kind is RtmsDataset.LAND:
        return "land", "sale"
    if kind is RtmsDataset.OFFICETEL_TRADE:
        return "officetel", "sale"
    rent = parse_manwon(item.get("monthlyrent", ""))
    if rent is None:
        return "officetel", None
    return "officetel", "chartered_lease" if rent == 0 else "monthly_lease"


def _key_month(item: Mapping[str, str]) -> str:
    year, month = item.get("dealyear", "").strip(), item.get("dealmonth", "").strip()
    if _INT.fullmatch(year) and _INT.fullmatch(month):
        return f"{int(year):04d}-{int(month):02d}"
    return "unknown"


def _exclusion(kind: RtmsDataset, item: Mapping[str, str]) -> str | None:
    if item.get("cdealtype", "").strip().upper() == "O":
        return "cancelled"
    if kind.partial_shares and item.get("sharedealingtype", "").strip() == "지분":
        return "partial_share"
    return None


@attrs.frozen(kw_only=True)
class Page:
    """One successful RTMS response: its items (fields by current tag name; None for an
    item that is not an object of plain values) and its paging figures."""

    items: tuple[dict[str, str] | None, ...]
    total_count: int | None
    page_no: int | None
    num_of_rows: int | None


def read_page(data: bytes, *, path: str = "<bytes>") -> Page:
    """Read one RTMS API response (XML or JSON, detected) without building records.

    ``GatewayError`` for a refusal: the gateway's ``OpenAPI_ServiceResponse`` or a
    ``resultCode`` other than success in a normal header (the portal lists ``20``, ``22``,
    ``30``, ``31``, ``32`` there), with the code and message; ``SourceError`` for anything
    else that is not a successful response (malformed, truncated, no result code).
    """
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if head == b"<":
        envelope = _xml_envelope(data, path)
    elif head in (b"{", b"["):
        envelope = _json_envelope(data, path)
    else:
        raise SourceError("neither XML nor JSON: not an RTMS API response", path=path)
    if envelope.result_code is None:
        raise SourceError("the response has no header/resultCode", path=path)
    if envelope.result_code not in OK_CODES:
        raise GatewayError(
            f"API error {envelope.result_code}: {envelope.result_msg or 'no message'}",
            path=path,
            reason_code=envelope.result_code,
            auth_message=envelope.result_msg,
        )
    return Page(
        items=tuple(envelope.items),
        total_count=envelope.total_count,
        page_no=envelope.page_no,
        num_of_rows=envelope.num_of_rows,
    )


def parse_rtms(data: bytes, kind: RtmsDataset | str, *, path: str = "<bytes>") -> ParseResult:
    """Read one RTMS API response (XML or JSON, detected) of ``kind``: a dataset, or its
    reader kind (``RtmsDataset.parse_kind``; ValueError for another string)."""
    dataset = RtmsDataset.of_parse_kind(kind)
    return parse_pages([read_page(data, path=path)], dataset, path=path)


def parse_pages(pages: Sequence[Page], kind: RtmsDataset, *, path: str = "<bytes>") -> ParseResult:
    """The records of consecutive pages of one query (a month of one district), read
    as one file: natural keys and their ordinals equal those of a single response
    holding every item in the same order. Paging figures come from the first page
    (one page) or describe the whole read (several)."""
    first = pages[0] if pages else Page(items=(), total_count=None, page_no=None, num_of_rows=None)
    items = [item for page in pages for item in page.items]
    several = len(pages) > 1
    report = LoadReport(
        path=path,
        unit="item",
        total_count=first.total_count,
        page_no=1 if several else first.page_no,
        num_of_rows=len(items) if several else first.num_of_rows,
    )
    keys = KeyMaker()
    prefix = f"rtms:{kind.parse_kind}"
    found = Collector(report=report, types_of=item_types)
    for ordinal, item in enumerate(items, start=1):
        report.read += 1
        if item is None:
            report.reject(ordinal, "invalid_record", "item is not an object of plain values")
            continue
        key = keys.key(
            prefix,
            item.get("sggcd", "").strip() or "?",
            _key_month(item),
            item,
            ignore=_KEY_IGNORED,
        )
        excluded = _exclusion(kind, item)
        found.add(ordinal, key, excluded, _transaction, kind, item, key)
        if excluded == "cancelled":
            found.date_cancellation(key, item.get("cdealday"))
    return found.result()
