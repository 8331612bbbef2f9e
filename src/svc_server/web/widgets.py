"""The building blocks the dashboard sections are made of: dialogs, tables, the
once-only secret panel, the delivery and invitation-link panels, select options, the
webhook form's data.updated filters."""

from __future__ import annotations

from html import escape

from svc_core.models import PROPERTY_TYPES, TRANSACTION_TYPES

MEMBER_NOTE = (
    "You are a <strong>member</strong> of this account: you can see {what}, but only its "
    "owner or an admin can {change}. Ask one of them to change your role."
)


def dialog(name: str, title: str, inner: str, confirm: str) -> str:
    """A modal confirmation (native ``<dialog>``: focus kept inside, Escape cancels).

    Without a field to fill, focus starts on Cancel, so a stray Enter destroys nothing.
    """
    first = "" if "<input" in inner or "<select" in inner or "<textarea" in inner else " autofocus"
    return (
        f'<dialog id="{name}-dialog" aria-labelledby="{name}-dialog-title">\n'
        f'<form method="dialog">\n<h2 id="{name}-dialog-title">{escape(title)}</h2>\n'
        f'{inner}<p class="actions"><button type="submit" value="confirm" id="{name}-confirm">'
        f"{escape(confirm)}</button> "
        f'<button type="submit" value="cancel" formnovalidate{first}>Cancel</button></p>\n'
        "</form>\n</dialog>\n"
    )


ONCE_PANEL = (
    '<div id="secret-panel" class="secret" role="region" hidden tabindex="-1" aria-labelledby="secret-title">\n'
    '<h2 id="secret-title">New secret</h2>\n'
    "<p><strong>Copy it now: you will not see this again.</strong> "
    '<span id="secret-note"></span></p>\n'
    '<p><label for="secret-value" id="secret-label">Plaintext</label>\n'
    '<input id="secret-value" readonly size="76" spellcheck="false" autocomplete="off">\n'
    '<button type="button" id="copy-secret">Copy</button>\n'
    '<span id="copy-status" role="status"></span></p>\n'
    '<p><button type="button" id="dismiss-secret">I have saved it</button></p>\n'
    "</div>\n"
)


DELIVERY_PANEL = (
    '<section id="delivery-detail" aria-labelledby="delivery-h" hidden tabindex="-1">\n'
    '<h2 id="delivery-h">Delivery</h2>\n<dl id="delivery-facts" class="facts"></dl>\n'
    '<h3 id="payload-h">Payload sent</h3>\n'
    '<p class="hint">Shown indented; it went out as compact JSON, byte for byte as signed '
    "(the API's <code>payload</code> field).</p>\n"
    '<pre id="delivery-payload" class="payload" aria-labelledby="payload-h" tabindex="0"></pre>\n'
    '<h3 id="response-h">Receiver\'s response</h3>\n<p id="delivery-response-status"></p>\n'
    '<pre id="delivery-response" class="payload" aria-labelledby="response-h" tabindex="0">'
    "</pre>\n"
    '<div class="manage"><p>A resend is a new delivery of the same event: the same '
    "<code>X-Svc-Event-Id</code> and body (receivers that dedupe by event id process it "
    "once), signed afresh. It counts toward the test-send limit.</p>\n"
    '<p class="actions"><button type="button" id="resend-delivery">Resend</button> '
    '<button type="button" class="secondary" id="close-delivery">Close</button></p></div>\n'
    '<div id="resend-result" role="status" class="result"></div>\n'
    "</section>\n"
)
"""One delivery of the log, opened by its View button: what was sent, what came back."""

INVITE_LINK_PANEL = (
    '<div id="invite-link-panel" class="secret" role="region" hidden tabindex="-1" '
    'aria-labelledby="invite-link-title">\n'
    '<h3 id="invite-link-title">Invitation link</h3>\n'
    '<p id="invite-link-note"></p>\n'
    '<p><label for="invite-link">Link to hand over</label>\n'
    '<input id="invite-link" readonly size="76" spellcheck="false">\n'
    '<button type="button" id="copy-invite-link">Copy</button>\n'
    '<span id="invite-copy-status" role="status"></span></p>\n'
    "</div>\n"
)
"""The link of a pending invitation: svc sends no email, the inviter hands it over."""


def table(table_id: str, caption: str, headers: tuple[str, ...]) -> str:
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in headers)
    return (
        f'<table id="{table_id}"><caption>{escape(caption)}</caption>\n'
        f"<thead><tr>{head}</tr></thead>\n<tbody></tbody></table>\n"
    )


def member_note(what: str, change: str) -> str:
    """Shown (by the script) instead of the write controls when the caller is a member."""
    text = MEMBER_NOTE.format(what=escape(what), change=escape(change))
    return f'<p class="role-note" role="note" hidden>{text}</p>\n'


def options(values: tuple[tuple[str, str], ...], selected: str | None = None) -> str:
    return "".join(
        f'<option value="{escape(v)}"{" selected" if v == selected else ""}>{escape(t)}</option>'
        for v, t in values
    )


def _choices(name: str, values: tuple[str, ...]) -> str:
    return "".join(
        f'<li><input type="checkbox" name="{name}" id="{name}-{escape(v)}" value="{escape(v)}">'
        f' <label for="{name}-{escape(v)}">{escape(v)}</label></li>'
        for v in values
    )


def data_filters() -> str:
    """The ``filters`` of a new endpoint: what ``data.updated`` sends it (none: all)."""
    return (
        "<fieldset><legend>data.updated filters</legend>\n"
        '<p><label for="hook-districts">District codes</label>\n'
        '<input id="hook-districts" name="sigungu_codes" size="40" '
        'pattern="[0-9]{5}([ ,]+[0-9]{5})*" aria-describedby="hook-districts-hint"></p>\n'
        '<p class="hint" id="hook-districts-hint">5-digit codes separated by commas, such as '
        "11680, 11110; empty: every district.</p>\n"
        f'<p>Property types (none ticked: all)</p><ul class="plain">'
        f"{_choices('filter-property', PROPERTY_TYPES)}</ul>\n"
        f'<p>Transaction types (none ticked: all)</p><ul class="plain">'
        f"{_choices('filter-transaction', TRANSACTION_TYPES)}</ul>\n"
        "</fieldset>\n"
    )
