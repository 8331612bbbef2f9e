"""The HTML of each dashboard section (server-rendered; the plain JavaScript in
``static/dashboard.js`` fills the tables from the JSON API). Every control has a visible
label, buttons are named by their action and tables have headers."""

from __future__ import annotations

from html import escape

from svc_core.models import INDUSTRIAL_USES, PROPERTY_TYPES, TRANSACTION_TYPES
from svc_core.webhooks.events import EVENT_TYPES
from svc_server.web.widgets import (
    DELIVERY_PANEL,
    INVITE_LINK_PANEL,
    ONCE_PANEL,
    data_filters,
    dialog,
    member_note,
    options,
    table,
)

SECTIONS: dict[str, str] = {
    "overview": "Overview",
    "keys": "API keys",
    "requests": "Request log",
    "webhooks": "Webhooks",
    "team": "Team",
    "explorer": "Explorer",
}


def nav(current: str, base: str = "") -> str:
    """The section links; ``base`` is the (escaped) mount prefix."""
    items = []
    for section, label in SECTIONS.items():
        href = f"{base}/dashboard" if section == "overview" else f"{base}/dashboard/{section}"
        mark = ' aria-current="page"' if section == current else ""
        items.append(f'<li><a href="{href}"{mark}>{escape(label)}</a></li>')
    return '<nav aria-label="Dashboard sections"><ul>' + "".join(items) + "</ul></nav>\n"


def _overview_body() -> str:
    return (
        '<section aria-labelledby="plan-h"><h2 id="plan-h">Plan and limits</h2>\n'
        '<dl id="plan-facts" class="facts"></dl></section>\n'
        '<section aria-labelledby="quota-h"><h2 id="quota-h">Monthly quota</h2>\n'
        '<p><label for="quota-bar">Live calls used this month</label>\n'
        '<progress id="quota-bar" max="100" value="0"></progress>\n'
        '<span id="quota-text"></span></p>\n'
        '<dl id="quota-facts" class="facts"></dl></section>\n'
        '<section aria-labelledby="daily-h"><h2 id="daily-h">Calls per day this month</h2>\n'
        '<p id="daily-note"></p>\n<div id="daily-chart" class="chart"></div>\n'
        + table(
            "days-table",
            "Days with calls this month (UTC), successful calls only",
            ("Date", "Live calls", "Test calls"),
        )
        + "</section>\n"
        + _key_usage_section()
        + '<section aria-labelledby="trial-h"><h2 id="trial-h">Trial and subscription</h2>\n'
        '<dl id="trial-facts" class="facts"></dl></section>\n'
    )


def _keys_body() -> str:
    return (
        member_note("its keys", "create, edit, rotate or revoke them")
        + '<section class="manage" aria-labelledby="new-key-h">'
        '<h2 id="new-key-h">Create a key</h2>\n'
        '<form id="key-form" class="stack">\n'
        '<p><label for="key-label">Label</label>\n'
        '<input id="key-label" name="label" maxlength="64" required></p>\n'
        '<p><label for="key-mode">Mode</label>\n<select id="key-mode" name="mode">'
        + options((("live", "live: counts against the quota"), ("test", "test: 60 per minute")))
        + "</select></p>\n"
        '<p><label for="key-scope">Scope</label>\n<select id="key-scope" name="scope">'
        + options((("read_only", "read_only"), ("admin", "admin")))
        + "</select></p>\n"
        '<p><label for="key-allowlist">IP allowlist (one address or CIDR per line; '
        "empty allows any address)</label>\n"
        '<textarea id="key-allowlist" name="ip_allowlist" rows="3" cols="40"></textarea></p>\n'
        '<p><button type="submit">Create key</button></p>\n</form>\n' + ONCE_PANEL + "</section>\n"
        '<section aria-labelledby="keys-h"><h2 id="keys-h">Your keys</h2>\n'
        + table(
            "keys-table",
            "API keys of this account",
            (
                "Label",
                "Prefix",
                "Mode",
                "Scope",
                "IP allowlist",
                "Status",
                "Created",
                "Last used",
                "Grace until",
                "Actions",
            ),
        )
        + "</section>\n"
        + dialog(
            "rotate",
            "Rotate key",
            '<p>A new key replaces <strong class="target-name"></strong>. The old key keeps '
            "working during the grace period.</p>\n"
            '<p><label for="rotate-grace">Grace period of the old key</label>\n'
            '<select id="rotate-grace">'
            + options(
                (
                    ("0", "none: the old key stops at once"),
                    ("3600", "1 hour"),
                    ("86400", "24 hours"),
                    ("604800", "7 days"),
                ),
                selected="86400",
            )
            + "</select></p>\n",
            "Rotate key",
        )
        + dialog(
            "revoke",
            "Revoke key",
            '<p>Revoke <strong class="target-name"></strong>? It stops working at once and '
            "cannot be restored.</p>\n",
            "Revoke key",
        )
        + dialog(
            "edit",
            "Edit key",
            '<p><label for="edit-label">Label</label>\n'
            '<input id="edit-label" maxlength="64" required></p>\n'
            '<p><label for="edit-allowlist">IP allowlist (one address or CIDR per line)</label>\n'
            '<textarea id="edit-allowlist" rows="3" cols="40"></textarea></p>\n',
            "Save changes",
        )
    )


def _key_usage_section() -> str:
    """Calls this month per API key, beside the account's total (overview)."""
    return (
        '<section aria-labelledby="key-usage-h"><h2 id="key-usage-h">Calls per key this month'
        "</h2>\n"
        + table(
            "key-usage-table",
            "Successful counted calls of each key this month (UTC); the total is the "
            "account's, which the quota counts",
            ("Key", "Prefix", "Mode", "Status", "Calls"),
        )
        + "</section>\n"
    )


STATUS_CHOICES = (
    ("", "any status"),
    ("2xx", "2xx: succeeded"),
    ("4xx", "4xx: refused (your request)"),
    ("5xx", "5xx: failed (the server)"),
    ("400", "400: invalid parameters"),
    ("402", "402: quota used up"),
    ("403", "403: forbidden (plan or address)"),
    ("404", "404: not found"),
    ("429", "429: rate limited"),
    ("503", "503: busy, try again"),
)


def _requests_body() -> str:
    """The request log: the calls of the account's keys, filtered by key and status."""
    return (
        '<section aria-labelledby="log-filter-h"><h2 id="log-filter-h">Filter</h2>\n'
        '<form id="log-form" class="filters">\n'
        '<p><label for="log-key">Key</label>\n<select id="log-key" name="key">'
        '<option value="">all keys</option></select></p>\n'
        '<p><label for="log-status">Status</label>\n<select id="log-status" name="status">'
        + options(STATUS_CHOICES)
        + "</select></p>\n"
        '<p><button type="submit">Show calls</button></p>\n</form>\n'
        '<p id="log-note"></p></section>\n'
        '<section aria-labelledby="log-h"><h2 id="log-h">Calls, newest first</h2>\n'
        + table(
            "log-table",
            "Calls made with this account's API keys (times in UTC)",
            ("Time", "Key", "Method", "Path", "Status and error code", "Request id", "Duration"),
        )
        + '<p class="actions"><button type="button" id="log-prev">Newer calls</button> '
        '<button type="button" id="log-next">Older calls</button> '
        '<span id="log-page"></span></p>\n</section>\n'
    )


def _webhooks_body() -> str:
    events = "".join(
        f'<li><input type="checkbox" name="events" id="event-{escape(e)}" value="{escape(e)}">'
        f' <label for="event-{escape(e)}">{escape(e)}</label></li>'
        for e in EVENT_TYPES
    )
    return (
        member_note("its endpoints and their delivery logs", "add, test, re-enable or revoke them")
        + '<section class="manage" aria-labelledby="new-hook-h">'
        '<h2 id="new-hook-h">Add an endpoint</h2>\n'
        '<form id="hook-form" class="stack">\n'
        '<p><label for="hook-url">Endpoint URL (https)</label>\n'
        '<input id="hook-url" name="url" type="url" size="50" required '
        'aria-describedby="hook-url-hint"></p>\n'
        '<p class="hint" id="hook-url-hint">svc delivers only to public addresses: private, '
        "loopback and local ones (10.x, 172.16–31.x, 192.168.x, 127.0.0.1, localhost, "
        "*.local) are refused. To try webhooks against a receiver on your own machine, run a "
        "development server with <code>SVC_WEBHOOK_ALLOW_PRIVATE=true</code> (it also "
        "allows http); never in production.</p>\n"
        '<p><label for="hook-description">Description</label>\n'
        '<input id="hook-description" name="description" size="50"></p>\n'
        '<fieldset><legend>Events</legend>\n<ul class="plain">'
        '<li><input type="checkbox" name="events" id="event-all" value="*" checked>'
        ' <label for="event-all">all account events (*)</label></li>'
        f"{events}</ul>\n"
        '<p class="hint">data.updated (a load changed the deals of a district\'s month) is '
        "sent only when you tick it, and only for the changes the filters below keep.</p>"
        "</fieldset>\n"
        + data_filters()
        + '<p><button type="submit">Add endpoint</button></p>\n</form>\n'
        + ONCE_PANEL
        + "</section>\n"
        '<section aria-labelledby="hooks-h"><h2 id="hooks-h">Endpoints</h2>\n'
        '<div id="test-result" role="status" class="result"></div>\n'
        + table(
            "hooks-table",
            "Webhook endpoints of this account",
            (
                "URL",
                "Description",
                "Events",
                "Status",
                "Consecutive failures",
                "Disabled at",
                "Created",
                "Actions",
            ),
        )
        + "</section>\n"
        '<section id="deliveries" aria-labelledby="deliveries-h" hidden>\n'
        '<h2 id="deliveries-h">Deliveries</h2>\n<p id="delivery-summary"></p>\n'
        + table(
            "deliveries-table",
            "Delivery log, newest first",
            (
                "Time",
                "Event type",
                "Event id",
                "Status",
                "HTTP status",
                "Duration",
                "Error",
                "Actions",
            ),
        )
        + '<p class="actions"><button type="button" id="deliveries-prev">Previous page</button> '
        '<button type="button" id="deliveries-next">Next page</button> '
        '<span id="deliveries-page"></span></p>\n</section>\n'
        + DELIVERY_PANEL
        + dialog(
            "revoke",
            "Revoke endpoint",
            '<p>Revoke <strong class="target-name"></strong>? Nothing more is sent to it and '
            "it cannot be re-enabled.</p>\n",
            "Revoke endpoint",
        )
    )


def _team_body() -> str:
    return (
        '<section aria-labelledby="members-h"><h2 id="members-h">Members</h2>\n'
        '<p id="seats"></p>\n'
        + table(
            "members-table",
            "Members and pending invitations",
            ("Email", "Role", "Status", "Invited", "Joined", "Actions"),
        )
        + "</section>\n"
        + member_note("its members", "invite or remove members")
        + '<section class="manage" aria-labelledby="invite-h">'
        '<h2 id="invite-h">Invite a member</h2>\n'
        '<p id="invite-how">svc sends no email. Invite an address, then copy the invitation '
        "link and hand it to that person: they sign in with the invited address, accept, "
        "and land in this account. A pending invitation's link is under Show link in the "
        "table above; it expires after 7 days.</p>\n"
        '<form id="invite-form" class="stack">\n'
        '<p><label for="invite-email">Email</label>\n'
        '<input id="invite-email" name="email" type="email" size="40" required></p>\n'
        '<p><label for="invite-role">Role</label>\n<select id="invite-role" name="role">'
        + options((("member", "member: reads"), ("admin", "admin: manages keys and team")))
        + "</select></p>\n"
        '<p><button type="submit">Invite</button></p>\n</form>\n'
        + INVITE_LINK_PANEL
        + "</section>\n"
        '<section aria-labelledby="invites-h"><h2 id="invites-h">Invitations for you</h2>\n'
        + table(
            "invites-table",
            "Invitations addressed to you",
            ("Account", "Role", "Invited", "Actions"),
        )
        + "</section>\n"
        + dialog(
            "remove",
            "Remove member",
            '<p>Remove <strong class="target-name"></strong> from this account?</p>\n',
            "Remove member",
        )
    )


def _compare_body() -> str:
    """The explorer's compare view: the cohort chosen above, in several districts."""
    return (
        '<section aria-labelledby="compare-h"><h2 id="compare-h">Compare districts</h2>\n'
        "<p>The property and transaction type, building type and lease kind chosen above, "
        "in every district of a province or in the districts chosen here, ranked.</p>\n"
        '<form id="compare-form" class="stack">\n'
        '<p><label for="c-sido">Province</label>\n<select id="c-sido">'
        + options(
            (
                ("", "the districts chosen below"),
                *((v, v) for v in ("서울", "부산", "인천", "대구", "대전", "울산", "경기")),
            )
        )
        + "</select></p>\n"
        '<p><label for="c-districts">Districts (without a province; up to 50)</label>\n'
        '<select id="c-districts" multiple size="6"></select></p>\n'
        '<p><label for="c-period">Period</label>\n<select id="c-period">'
        + options(
            (
                ("last_12m", "last 12 months"),
                ("last_6m", "last 6 months"),
                ("last_3m", "last 3 months"),
            )
        )
        + "</select></p>\n"
        '<p><label for="c-sort">Rank by</label>\n<select id="c-sort">'
        + options(
            (
                ("median_per_m2", "median per m²"),
                ("median", "median (whole amount)"),
                ("median_monthly_rent", "median monthly rent"),
                ("contract_count", "contracts"),
            )
        )
        + "</select></p>\n"
        '<p><button type="submit">Compare</button></p>\n</form>\n'
        '<p id="compare-note"></p>\n<div id="compare-chart"></div>\n'
        '<p><a id="compare-csv" hidden>Download CSV of this comparison</a></p>\n'
        + table(
            "compare-table",
            "The districts compared, ranked",
            (
                "Rank",
                "District",
                "Value",
                "95% interval",
                "Contracts",
                "Confidence",
                "Status",
                "Change vs previous period",
                "Change vs a year earlier",
            ),
        )
        + "</section>\n"
    )


def _explorer_body() -> str:
    return (
        '<section aria-labelledby="query-h"><h2 id="query-h">Choose a cohort</h2>\n'
        '<form id="explorer-form" class="stack">\n'
        '<p><label for="x-district">District</label>\n<select id="x-district" required>'
        "</select></p>\n"
        '<p><label for="x-property">Property type</label>\n<select id="x-property">'
        + options(tuple((v, v) for v in PROPERTY_TYPES))
        + "</select></p>\n"
        '<p><label for="x-transaction">Transaction type</label>\n<select id="x-transaction">'
        + options(tuple((v, v) for v in TRANSACTION_TYPES))
        + "</select></p>\n"
        '<p><label for="x-building">Building type</label>\n<select id="x-building">'
        + options((("", "all"), ("whole_building", "whole buildings"), ("unit", "units")))
        + "</select></p>\n"
        # shown by the script for the property types that have them; the categories and
        # zones offered are those /dimensions lists with data
        '<p hidden><label for="x-industrial-use">Use (factories and warehouses)</label>\n'
        '<select id="x-industrial-use">'
        + options((("", "all uses"), *((v, v) for v in INDUSTRIAL_USES)))
        + "</select></p>\n"
        '<p hidden><label for="x-land-category">Land category (지목)</label>\n'
        '<select id="x-land-category"></select></p>\n'
        '<p hidden><label for="x-zoning">Zone (용도지역)</label>\n'
        '<select id="x-zoning"></select></p>\n'
        '<p><label for="x-lease">Lease kind (leases only)</label>\n<select id="x-lease">'
        + options((("", "new and renewal"), ("new", "new leases"), ("renewal", "renewals")))
        + "</select></p>\n"
        '<p><label for="x-measure">Chart</label>\n<select id="x-measure">'
        # per m² first: one whole-building sale 100 times a unit's price would flatten
        # every other period of a chart of whole amounts
        + options((("m2", "per m²"), ("total", "whole amount"), ("pyeong", "per pyeong")))
        + "</select></p>\n"
        '<p><label for="x-granularity">Period kind</label>\n<select id="x-granularity">'
        + options((("quarter", "quarters"), ("month", "months")))
        + "</select></p>\n"
        '<p><label for="x-periods">Periods (up to 12; the latest are chosen for you)</label>\n'
        '<select id="x-periods" multiple size="8"></select></p>\n'
        '<p><button type="submit">Show chart</button></p>\n</form></section>\n'
        '<section aria-labelledby="chart-h"><h2 id="chart-h">Median with p25–p75 band</h2>\n'
        '<p id="chart-note"></p>\n<div id="chart"></div>\n'
        '<div id="chart-limits" hidden><h3>What the API says about these figures</h3>\n'
        '<ul id="limits-list"></ul></div>\n'
        '<p><a id="csv-link" hidden>'
        "Download CSV of this series</a></p>\n"
        + table(
            "points-table",
            "The points of the chart",
            (
                "Period",
                "Samples",
                "Contracts",
                "p25",
                "Median",
                "p75",
                "Confidence",
                "Status",
                "Sources",
                "Change vs previous period",
                "Change vs a year earlier",
            ),
        )
        + "</section>\n"
        + _compare_body()
        + '<section aria-labelledby="coverage-h"><h2 id="coverage-h">Coverage of the district</h2>\n'
        + table(
            "coverage-table",
            "Cohorts of the district with data",
            (
                "Property type",
                "Transaction type",
                "Earliest",
                "Latest",
                "Periods",
                "Samples",
                "Contracts",
                "Median samples per period",
                "Sources",
            ),
        )
        + "</section>\n"
    )


BODIES = {
    "overview": _overview_body,
    "keys": _keys_body,
    "requests": _requests_body,
    "webhooks": _webhooks_body,
    "team": _team_body,
    "explorer": _explorer_body,
}
