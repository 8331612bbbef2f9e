"""Deterministic synthetic demo data: transactions and index observations.

``demo_transactions(seed)`` yields about 170,000 transactions over the 60 months ending
``DEMO_LATEST`` (2026-09) in Seoul's 25 gu and 12 other metro districts, for every
property type and transaction type; ``demo_indices(seed)`` yields every metric for the
same districts and the R-ONE property types (office, retail, commercial_complex), per
quarter over the same five years. The same seed always gives the same records
(``random.Random(seed)``, no clock).

Realism, roughly: prices follow area × a per-type price per m² × a district factor
(Gangnam highest) × a gentle trend × log-normal noise, rounded to 만원 like the real
reports; busy districts (Gangnam, Seocho, the CBD, Yeouido) trade most. Sources are real
ids: ``rtms_official`` for most sales and officetel leases, ``public_assessment`` and
``rone_index_derived`` for the rest, slightly biased against each other so confidence
levels vary. Commercial leases (office, retail, commercial_complex, mixed_use) come only
from the non-RTMS sources, since MOLIT does not collect them. Officetel leases say whether
they are new or renewals, RTMS sales their deal type (from 2021-11) and buyer type (from
2024-01), as RTMS publishes them. Factory/warehouse (``industrial``) and ``land`` sales
come from a generator of their own (``random.Random`` seeded apart, after the others, so
the other records stay what they were): sales only, with a building use or a land
category and a zone as RTMS publishes them.

Every natural key starts with ``demo:`` so the server can flag synthetic rows.
"""

from __future__ import annotations

import bisect
import datetime
import itertools
import math
import random
from collections.abc import Iterator

from svc_core.models import IndexObservation, Transaction
from svc_core.periods import Month, month_range, quarter_of, quarter_range
from svc_core.regions import region
from svc_core.sources.rtms import industrial_use_of

DEMO_LATEST = Month(year=2026, month=9)
DEMO_MONTHS = 60
DEMO_FIRST = DEMO_LATEST.shift(1 - DEMO_MONTHS)
DEMO_KEY_PREFIX = "demo:"

SEOUL_DONGS: dict[str, tuple[str, ...]] = {
    "11110": ("청진동", "관철동", "인사동", "숭인동", "창신동", "혜화동"),
    "11140": ("을지로2가", "태평로1가", "남대문로5가", "충무로2가", "명동2가", "신당동"),
    "11170": ("한강로2가", "한남동", "이태원동", "청파동1가", "후암동"),
    "11200": ("성수동1가", "성수동2가", "행당동", "금호동2가", "옥수동"),
    "11215": ("자양동", "화양동", "구의동", "광장동", "중곡동"),
    "11230": ("장안동", "청량리동", "회기동", "전농동", "답십리동"),
    "11260": ("면목동", "상봉동", "망우동", "묵동", "신내동"),
    "11290": ("동선동1가", "안암동5가", "길음동", "정릉동", "돈암동"),
    "11305": ("미아동", "수유동", "번동", "우이동"),
    "11320": ("창동", "쌍문동", "방학동", "도봉동"),
    "11350": ("상계동", "중계동", "하계동", "공릉동", "월계동"),
    "11380": ("불광동", "응암동", "녹번동", "대조동", "진관동"),
    "11410": ("창천동", "신촌동", "대현동", "연희동", "홍제동"),
    "11440": ("서교동", "동교동", "합정동", "공덕동", "도화동", "상암동", "연남동"),
    "11470": ("목동", "신정동", "신월동"),
    "11500": ("마곡동", "화곡동", "등촌동", "염창동", "가양동"),
    "11530": ("구로동", "신도림동", "개봉동", "오류동"),
    "11545": ("가산동", "독산동", "시흥동"),
    "11560": ("여의도동", "영등포동", "당산동", "문래동", "양평동"),
    "11590": ("노량진동", "사당동", "상도동", "흑석동", "대방동"),
    "11620": ("봉천동", "신림동", "남현동"),
    "11650": ("서초동", "반포동", "방배동", "양재동", "잠원동"),
    "11680": ("역삼동", "삼성동", "논현동", "대치동", "청담동", "신사동", "압구정동", "도곡동"),
    "11710": ("잠실동", "문정동", "가락동", "방이동", "석촌동", "신천동"),
    "11740": ("천호동", "성내동", "길동", "암사동", "명일동", "고덕동"),
}
GENERIC_DONGS: tuple[str, ...] = ("중앙동", "신흥동", "문화동", "대흥동")

OTHER_DISTRICTS: tuple[str, ...] = (
    "26350",  # 부산 해운대구
    "26230",  # 부산 부산진구
    "27110",  # 대구 중구
    "27260",  # 대구 수성구
    "28185",  # 인천 연수구
    "28200",  # 인천 남동구
    "29140",  # 광주 서구
    "30200",  # 대전 유성구
    "31140",  # 울산 남구
    "41135",  # 성남시 분당구
    "41117",  # 수원시 영통구
    "41465",  # 용인시 수지구
)

# code: (activity weight, price factor)
_DISTRICT_PROFILE: dict[str, tuple[float, float]] = {
    "11680": (3.0, 1.9),
    "11650": (2.2, 1.7),
    "11140": (1.8, 1.6),
    "11110": (1.6, 1.55),
    "11560": (1.8, 1.35),
    "11440": (1.5, 1.3),
    "11710": (1.6, 1.4),
    "11170": (1.2, 1.5),
    "11200": (1.2, 1.3),
    "11545": (1.1, 0.95),
    "11530": (1.1, 0.95),
    "41135": (1.2, 1.15),
    "26350": (1.0, 0.85),
    "26230": (0.9, 0.7),
}
_DEFAULT_PROFILE = (0.7, 1.0)
_METRO_PROFILE = (0.6, 0.6)

_RTMS_MIX: tuple[tuple[str, float], ...] = (
    ("rtms_official", 0.80),
    ("public_assessment", 0.12),
    ("rone_index_derived", 0.08),
)
_LEASE_MIX: tuple[tuple[str, float], ...] = (
    ("public_assessment", 0.6),
    ("rone_index_derived", 0.4),
)
_SOURCE_BIAS: dict[str, float] = {
    "rtms_official": 1.0,
    "public_assessment": 0.93,
    "rone_index_derived": 1.05,
}

# (property type, transaction type, monthly rate at weight 1, median area m², area sigma)
_SEGMENTS: tuple[tuple[str, str, float, float, float], ...] = (
    ("office", "sale", 4.5, 120.0, 0.9),
    ("retail", "sale", 4.0, 250.0, 0.7),
    ("commercial_complex", "sale", 6.0, 45.0, 0.6),
    ("mixed_use", "sale", 2.0, 400.0, 0.8),
    ("officetel", "sale", 10.0, 30.0, 0.35),
    ("officetel", "chartered_lease", 8.0, 30.0, 0.35),
    ("officetel", "monthly_lease", 18.0, 28.0, 0.3),
    ("office", "chartered_lease", 1.2, 150.0, 0.8),
    ("office", "monthly_lease", 4.5, 150.0, 0.8),
    ("retail", "chartered_lease", 1.2, 120.0, 0.7),
    ("retail", "monthly_lease", 4.5, 120.0, 0.7),
    ("commercial_complex", "chartered_lease", 1.2, 45.0, 0.6),
    ("commercial_complex", "monthly_lease", 4.5, 45.0, 0.6),
    ("mixed_use", "chartered_lease", 1.2, 200.0, 0.8),
    ("mixed_use", "monthly_lease", 2.5, 200.0, 0.8),
)
# KRW per m² at price factor 1: sale price, and monthly rent
_PRICE_PER_M2: dict[str, float] = {
    "office": 11_000_000.0,
    "retail": 9_000_000.0,
    "commercial_complex": 8_000_000.0,
    "mixed_use": 7_000_000.0,
    "officetel": 6_500_000.0,
}
_RENT_PER_M2: dict[str, float] = {
    "office": 30_000.0,
    "retail": 45_000.0,
    "commercial_complex": 40_000.0,
    "mixed_use": 25_000.0,
    "officetel": 22_000.0,
}

_DEPOSIT_MONTHS: tuple[int, ...] = (10, 10, 12, 20, 30)
"""A monthly lease's deposit, in months of rent."""

INDEX_PROPERTY_TYPES: tuple[str, ...] = ("office", "retail", "commercial_complex")


def demo_districts() -> tuple[str, ...]:
    """Codes of the demo districts: Seoul's 25 gu, then the other metro districts."""
    return (*SEOUL_DONGS, *OTHER_DISTRICTS)


def _profile(code: str) -> tuple[float, float]:
    if code in _DISTRICT_PROFILE:
        return _DISTRICT_PROFILE[code]
    return _DEFAULT_PROFILE if code.startswith("11") else _METRO_PROFILE


def _pick(x: float, mix: tuple[tuple[str, float], ...]) -> str:
    """The source whose share interval holds ``x`` (uniform in [0, 1))."""
    for source, share in mix:
        x -= share
        if x < 0:
            return source
    return mix[-1][0]


def _manwon(krw: float) -> int:
    """Round to whole 만원 (10,000 KRW) like the sources, at least 1 만원."""
    return max(1, round(krw / 10_000)) * 10_000


def demo_transactions(seed: int) -> Iterator[Transaction]:
    """Yield the demo transactions for ``seed`` (deterministic, about 160,000)."""
    rng = random.Random(seed)  # noqa: S311 - reproducible demo data, not security
    rand, gauss, exp = rng.random, rng.gauss, math.exp
    months = month_range(DEMO_FIRST, DEMO_LATEST)
    serial = 0
    for code in demo_districts():
        found = region(code)
        if found is None:  # the bundled table holds every demo district
            continue
        name = found.name
        weight, factor = _profile(code)
        dongs = SEOUL_DONGS.get(code, GENERIC_DONGS)
        dong_cum = list(itertools.accumulate(1.0 / (i + 1) for i in range(len(dongs))))
        dong_total = dong_cum[-1]
        for step, month in enumerate(months):
            trend = 1.0 + 0.025 * step / 12 + 0.03 * math.sin(step / 9)
            season = 1.0 + 0.15 * math.cos((month.month - 4) * math.pi / 6)
            days = [
                datetime.date(month.year, month.month, d) for d in range(1, month.last_day.day + 1)
            ]
            n_days = len(days)
            for ptype, ttype, rate, area_median, area_sigma in _SEGMENTS:
                expected = rate * weight * season
                count = int(expected) + (1 if rand() < expected % 1 else 0)
                mix = _LEASE_MIX if ttype != "sale" and ptype != "officetel" else _RTMS_MIX
                price_unit = _PRICE_PER_M2[ptype] * factor * trend
                rent_unit = _RENT_PER_M2[ptype] * factor**0.7 * trend
                deposit_ratio = 0.75 if ptype == "officetel" else 0.45
                for _ in range(count):
                    source = _pick(rand(), mix)
                    area = min(max(round(area_median * exp(gauss(0.0, area_sigma)), 2), 10.0), 5e4)
                    noise = exp(gauss(0.0, 0.22)) * _SOURCE_BIAS[source]
                    rent: int | None = None
                    if ttype == "sale":
                        price = _manwon(area * price_unit * noise)
                    elif ttype == "chartered_lease":
                        price = _manwon(area * price_unit * noise * deposit_ratio)
                    else:
                        rent = _manwon(area * rent_unit * noise)
                        price = rent * _DEPOSIT_MONTHS[int(rand() * len(_DEPOSIT_MONTHS))]
                    serial += 1
                    btype = _building_type(ptype, area, serial * _GOLDEN % 1.0)
                    dong = dongs[bisect.bisect(dong_cum, rand() * dong_total)]
                    day = days[int(rand() * n_days)]  # after the dong: the draws keep their order
                    kind, deal, buyer = _contract(source, ptype, ttype, day, serial)
                    yield Transaction(
                        source=source,
                        sigungu_code=code,
                        sigungu=name,
                        dong=dong,
                        property_type=ptype,
                        transaction_type=ttype,
                        deal_date=day,
                        price_krw=price,
                        monthly_rent_krw=rent,
                        area_m2=area,
                        natural_key=f"{DEMO_KEY_PREFIX}{seed}:tx:{serial}",
                        building_type=btype,
                        land_area_m2=round(area * 0.45, 2) if btype == "whole_building" else None,
                        lease_kind=kind,
                        deal_type=deal,
                        buyer_type=buyer,
                    )

    yield from _land_and_industrial(seed, serial)


# (property type, monthly rate at weight 1, median area m², area sigma, KRW per m²)
_OTHER_SALES: tuple[tuple[str, float, float, float, float], ...] = (
    ("industrial", 1.6, 600.0, 0.8, 2_400_000.0),
    ("land", 3.0, 700.0, 1.1, 600_000.0),
)
_INDUSTRIAL_USES = (("공장", 0.5), ("창고시설", 0.4), ("자동차 관련시설", 0.1))
_DEMO_LAND = (("임야", 0.3), ("전", 0.2), ("답", 0.2), ("대", 0.2), ("도로", 0.1))
_DEMO_ZONES = (
    ("계획관리지역", 0.35),
    ("보전관리지역", 0.25),
    ("자연녹지지역", 0.2),
    ("제2종일반주거지역", 0.1),
    ("일반공업지역", 0.1),
)


def _land_and_industrial(seed: int, serial: int) -> Iterator[Transaction]:
    """Factory/warehouse and land sales of every demo district and month (module
    docstring); natural keys go on from ``serial``."""
    rng = random.Random(f"svc-demo-land:{seed}")  # noqa: S311 - demo data, not security
    for code in demo_districts():
        found = region(code)
        if found is None:
            continue
        weight, factor = _profile(code)
        dongs = SEOUL_DONGS.get(code, GENERIC_DONGS)
        for step, month in enumerate(month_range(DEMO_FIRST, DEMO_LATEST)):
            trend = 1.0 + 0.02 * step / 12
            for ptype, rate, area_median, area_sigma, per_m2 in _OTHER_SALES:
                expected = rate * max(weight, 0.8)
                count = int(expected) + (1 if rng.random() < expected % 1 else 0)
                for _ in range(count):
                    serial += 1
                    area = round(min(max(area_median * math.exp(rng.gauss(0, area_sigma)), 5), 5e4))
                    noise = math.exp(rng.gauss(0.0, 0.3))
                    zone = _pick(rng.random(), _DEMO_ZONES)
                    day = datetime.date(month.year, month.month, 1 + int(rng.random() * 28))
                    use, btype = None, None
                    if ptype == "industrial":
                        use = _pick(rng.random(), _INDUSTRIAL_USES)
                        btype = "whole_building" if rng.random() < 0.8 else "unit"
                    land = area if ptype == "land" else round(area * 2.5, 2)
                    yield Transaction(
                        source="rtms_official",
                        sigungu_code=code,
                        sigungu=found.name,
                        dong=dongs[int(rng.random() * len(dongs))],
                        property_type=ptype,
                        transaction_type="sale",
                        deal_date=day,
                        price_krw=_manwon(area * per_m2 * factor * trend * noise),
                        monthly_rent_krw=None,
                        area_m2=float(area),
                        natural_key=f"{DEMO_KEY_PREFIX}{seed}:tx:{serial}",
                        building_type=btype,
                        land_area_m2=float(land) if btype != "unit" else None,
                        building_use=use,
                        deal_type="brokered" if rng.random() < 0.5 else "direct",
                        land_use=zone,
                        zoning=zone,
                        land_category=_pick(rng.random(), _DEMO_LAND) if ptype == "land" else None,
                        industrial_use=industrial_use_of(use) if use else None,
                    )


_GOLDEN = 0.6180339887498949
"""Spreads serial numbers evenly over [0, 1): the building type draws no random number,
so every other demo value stays what it was."""


def _building_type(ptype: str, area: float, draw: float) -> str:
    """A realistic split: officetels and commercial complexes are units; an office or
    retail deal is a whole building more often the larger it is (about 1 in 10 overall)."""
    if ptype in ("officetel", "commercial_complex"):
        return "unit"
    share = 0.05 if area < 300 else 0.35
    return "whole_building" if draw < share else "unit"


_SQRT2, _SQRT3 = math.sqrt(2.0) % 1.0, math.sqrt(3.0) % 1.0
"""Two more even spreads of the serial numbers, for what RTMS says of a contract."""
_PARTIES = (("individual", 0.55), ("company", 0.40), ("public_body", 0.02), ("other", 0.03))


def _contract(
    source: str, ptype: str, ttype: str, day: datetime.date, serial: int
) -> tuple[str | None, str | None, str | None]:
    """(lease kind, deal type, buyer type) as RTMS would publish them, drawing no random
    number: an officetel lease's kind (about 1 in 5 a renewal), an RTMS sale's deal type
    (from 2021-11, about 6 in 10 brokered) and buyer type (from 2024-01)."""
    first, second = serial * _SQRT2 % 1.0, serial * _SQRT3 % 1.0
    if ttype != "sale":
        kind = ("renewal" if first < 0.22 else "new") if ptype == "officetel" else None
        return kind, None, None
    if source != "rtms_official":
        return None, None, None
    deal = None if day < datetime.date(2021, 11, 1) else "brokered" if first < 0.6 else "direct"
    buyer = None if day < datetime.date(2024, 1, 1) else _pick(second, _PARTIES)
    return None, deal, buyer


def demo_indices(seed: int) -> Iterator[IndexObservation]:
    """Yield quarterly index observations for every demo district, R-ONE property type and
    metric of all floors (every metric but ``floor_utility_ratio``, a floor's) over the
    demo quarters (deterministic for ``seed``)."""
    rng = random.Random(f"svc-demo-indices:{seed}")  # noqa: S311 - demo data, not security
    quarters = quarter_range(quarter_of(DEMO_FIRST), quarter_of(DEMO_LATEST))
    for code in demo_districts():
        found = region(code)
        if found is None:
            continue
        weight, factor = _profile(code)
        for ptype in INDEX_PROPERTY_TYPES:
            base_vacancy = {"office": 6.0, "retail": 11.0, "commercial_complex": 8.0}[ptype]
            vacancy = min(14.0, max(2.5, base_vacancy / weight**0.5 + rng.uniform(-1.0, 1.0)))
            rent_index = rng.uniform(97.0, 103.0)
            price_index = rng.uniform(96.0, 104.0)
            # thousand won per m², from the rent index: no draw, same sequence
            base_rent = {"office": 22.0, "retail": 28.0, "commercial_complex": 18.0}[ptype]
            for quarter in quarters:
                vacancy = min(15.0, max(2.0, vacancy + rng.gauss(0.0, 0.35)))
                income = min(1.5, max(1.0, 1.25 - 0.1 * (factor - 1.0) + rng.gauss(0.0, 0.05)))
                capital = rng.gauss(0.4, 0.6)
                rent_index *= 1.0 + rng.gauss(0.004, 0.004)
                price_index *= 1.0 + capital / 100.0
                values = {
                    "vacancy_rate": vacancy,
                    "income_yield": income,
                    "capital_yield": capital,
                    "total_return": round(income, 2) + round(capital, 2),
                    "rent_index": rent_index,
                    "sale_price_index": price_index,
                    "rent_level": base_rent * weight**0.5 * rent_index / 100.0,
                }
                # a quarter's NOI per m²: three months' rent less about a quarter of costs
                values["net_operating_income"] = values["rent_level"] * 3 * 0.75
                for metric, value in values.items():
                    yield IndexObservation(
                        sigungu_code=code,
                        sigungu=found.name,
                        property_type=ptype,
                        metric_type=metric,
                        period=quarter.label,
                        period_end_date=quarter.end_date,
                        value_pct=round(value, 2),
                        source="rone_official",
                        natural_key=f"{DEMO_KEY_PREFIX}{seed}:{code}:{ptype}:{metric}:{quarter.label}",
                    )
