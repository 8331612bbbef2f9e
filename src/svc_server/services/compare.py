"""Districts compared: ``GET /api/v1/real-estate/compare`` (issue 46, item 1).

Each district's figures are what the pulse service answers for it (in m² and in pyeong,
both cached per data version as any pulse answer), and a district pulse answers with a
404 is listed with that 404's ``reason``: no pulse logic exists twice. The answer's
``data_as_of`` and ``data_version`` are those of the districts compared (and their
renumbering aliases).
"""

from __future__ import annotations

import attrs

from svc_core import periods
from svc_core.envelope import Answer
from svc_core.errors import NotFound
from svc_core.realestate import compare as core
from svc_core.realestate.common import codes_of, data_as_of, data_version
from svc_core.realestate.pulse import PulseRow
from svc_core.realestate.query import PulseQuery
from svc_server.services import realestate as pulse_service
from svc_server.services.realestate import Call
from svc_server.store import Store

COMPARE_COLUMNS = core.COMPARE_COLUMNS


def _district(store: Store, query: core.CompareQuery, code: str, call: Call) -> core.District:
    """What pulse answers for district ``code``: its row in both units, or its reason."""
    rows: list[PulseRow | None] = []
    for unit in ("m2", "pyeong"):
        asked = PulseQuery(cohort=query.district(code), period=query.period, area_unit=unit)
        try:
            answer = pulse_service.pulse(store, asked, call)
        except NotFound as err:
            return core.District(code=code, reason=str(err.extra.get("reason")))
        found = answer.data[0]
        assert isinstance(found, PulseRow)  # one cohort: both types are given
        rows.append(found)
    return core.District(code=code, row=rows[0], pyeong=rows[1])


def compare(store: Store, query: core.CompareQuery, call: Call) -> Answer:
    """GET /api/v1/real-estate/compare: one row per district, ranked."""
    state = call.versions.state(store)
    latest = periods.parse_month(state.latest_month) if state.latest_month else None
    window = periods.resolve_pulse_period(query.period, latest)
    districts = [_district(store, query, code, call) for code in query.codes]
    codes = [alias for code in query.codes for alias in codes_of(code)]
    context = attrs.evolve(
        pulse_service.answer_context(state, call),
        data_as_of=data_as_of(state.transactions_changed, codes),
        data_version=data_version(state.transactions_versions, codes),
    )
    return core.compare_answer(districts, query, window, context, synthetic=state.synthetic)
