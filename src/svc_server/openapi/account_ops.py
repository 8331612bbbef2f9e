"""API-reference text of the account operations: session, usage, API keys, webhooks and
team. Each constant hangs on its route in ``svc_server.app.routes``.

Long because it is a table: one ``Operation`` per account route, each read on its own.
"""

from __future__ import annotations

import attrs

from svc_core.accounts.keys import MAX_GRACE_SECONDS
from svc_core.json_schema import array, integer, ref, string
from svc_server.http.routing import Operation
from svc_server.openapi.operations import (
    KEY_EXAMPLE,
    META_EXAMPLE,
    account_ok,
    confirmed,
    error,
    json_body,
    ok,
)

NO_CONSUMER = error("NotFound", "NO_CONSUMER.")
"""The 404 of a signed-in user without an active consumer (account)."""
KEY_ID = {"key_id": "The key's id."}
ENDPOINT_ID = {"endpoint_id": "The endpoint's id."}

# session

CREATE_SESSION = Operation(
    operation_id="createSession",
    tag="Session",
    summary="Sign in",
    description="Exchange an identity-provider JWT (`exp` required; `iss`/`aud` checked "
    "when configured) for the `svc_session` cookie (HttpOnly, Secure, SameSite=Lax, "
    "15 minutes, renewed by each authenticated request). The first sign-in of a new "
    "user creates a starter consumer whose key is returned once as `api_key`.",
    body=json_body("SessionCreate", example={"jwt": "eyJhbGciOiJSUzI1NiIs..."}),
    responses={
        "200": {
            **account_ok({"data": ref("Session")}, "Signed in."),
            "headers": {
                "Set-Cookie": {
                    "description": "svc_session=...; HttpOnly; Secure; SameSite=Lax; "
                    "Path=/; Max-Age=900",
                    "schema": {"type": "string"},
                }
            },
        },
        "401": error(
            "Unauthorized",
            "JWT_INVALID: the token is missing, malformed, "
            "expired, or not signed by the configured provider.",
        ),
    },
)

DELETE_SESSION = Operation(
    operation_id="deleteSession",
    tag="Session",
    summary="Sign out",
    description="Revokes the session server-side (the old cookie then gets 401) and "
    "clears the cookie.",
    responses={"200": confirmed("signed_out", "Signed out.")},
)

# usage

GET_USAGE = Operation(
    operation_id="getUsage",
    tag="Usage",
    summary="Plan, limits and this month's usage",
    description="For the caller's highest-plan consumer. Counters update per minute; poll "
    "at most every 30 seconds. `Cache-Control: private, no-store`.",
    responses={
        "200": account_ok({"data": ref("UsageSummary")}, "The usage summary."),
        "404": error("NotFound", "NO_CONSUMER: the user has no active consumer."),
        "500": error("ServerError", "USAGE_FAILED: usage could not be read."),
    },
)

LIST_REQUESTS = Operation(
    operation_id="listRequests",
    tag="Usage",
    summary="Request log of the account's API keys",
    description="The calls made with the consumer's API keys, successful or refused (400, "
    "402, 403, 404, 429, ...), newest first, each with the `X-Request-ID` its response "
    "carried. Calls without a known key (401) belong to no account and are not logged. "
    "Kept 7 days and at most the 1,000 newest calls per account. Lines are written in "
    "batches: a call shows within about a second (at once when the same server process "
    "answers this request). `path` includes the query string, cut to 512 characters. "
    "Filter by `key` (a key id) and `status` (`2xx`, `4xx`, `5xx` or an exact code). "
    "Not counted against the quota.",
    responses={
        "200": account_ok({"data": ref("RequestLogPage")}, "One page of the log."),
        "404": NO_CONSUMER,
    },
)

# keys

LIST_API_KEYS = Operation(
    operation_id="listApiKeys",
    tag="API keys",
    summary="List API keys",
    description="Every key of the consumer, with its status (`active`, `grace` until "
    "`grace_until`, `revoked`, `expired`). Never the secret.",
    responses={
        "200": account_ok(
            {"data": array(ref("ApiKey"))},
            "The keys.",
            {"data": [KEY_EXAMPLE], "meta": META_EXAMPLE},
        ),
        "404": NO_CONSUMER,
    },
)

CREATE_API_KEY = Operation(
    operation_id="createApiKey",
    tag="API keys",
    summary="Create an API key",
    description="The plaintext key is in `key`, in this response only. The body is "
    "checked first (400), then the role (403), then the plan's key limit (402 "
    "KEY_LIMIT_REACHED; keys in grace do not count).",
    body=json_body(
        "ApiKeyCreate",
        example={"label": "ci", "mode": "live", "scope": "read_only", "ip_allowlist": []},
    ),
    responses={
        "200": account_ok(
            {"data": ref("ApiKeyCreated")},
            "The new key.",
            {
                "data": {**KEY_EXAMPLE, "key": "svc_pk_live_3f9a" + "0" * 28},
                "meta": META_EXAMPLE,
            },
            links={
                "update": ("updateApiKey", "key_id"),
                "rotate": ("rotateApiKey", "key_id"),
                "revoke": ("revokeApiKey", "key_id"),
            },
        ),
        "402": error("PaymentRequired", "KEY_LIMIT_REACHED."),
        "404": NO_CONSUMER,
    },
)

UPDATE_API_KEY = Operation(
    operation_id="updateApiKey",
    tag="API keys",
    summary="Rename a key or change its IP allowlist",
    description="Only `label` and `ip_allowlist` can change; `mode`, `scope` and the "
    "read-only fields are refused with 400.",
    path_params=KEY_ID,
    body=json_body("ApiKeyPatch", example={"label": "ci-2"}),
    responses={
        "200": account_ok({"data": ref("ApiKey")}, "The updated key."),
        "404": error("NotFound", "No such key for this consumer (or NO_CONSUMER)."),
    },
)

ROTATE_API_KEY = Operation(
    operation_id="rotateApiKey",
    tag="API keys",
    summary="Rotate a key",
    description="Issues a new key now; the old one keeps working until `grace_until` "
    f"(`grace_period_seconds`, 0 to {MAX_GRACE_SECONDS}, default 86400). Emits "
    "key.rotated. Allowed at the key limit.",
    path_params=KEY_ID,
    body=json_body("ApiKeyRotate", required=False, example={"grace_period_seconds": 3600}),
    responses={
        "200": ok(ref("ApiKeyRotated"), "The new key and the old key's grace."),
        "404": error("NotFound", "No such key for this consumer."),
        "409": error("Conflict", "KEY_NOT_ACTIVE: only an active key can be rotated."),
    },
)

REVOKE_API_KEY = Operation(
    operation_id="revokeApiKey",
    tag="API keys",
    summary="Revoke a key",
    description="The key gets 401 from now on; emits key.revoked.",
    path_params=KEY_ID,
    responses={
        "200": confirmed("revoked", "Revoked."),
        "404": error("NotFound", "No such key, or already revoked."),
    },
)

DELETE_API_KEY = attrs.evolve(
    REVOKE_API_KEY,
    operation_id="deleteApiKey",
    description="Same as POST .../revoke: the key gets 401 from now on; emits key.revoked.",
)

# webhooks

LIST_WEBHOOK_ENDPOINTS = Operation(
    operation_id="listWebhookEndpoints",
    tag="Webhooks",
    summary="List webhook endpoints",
    description="Every endpoint of the consumer, revoked ones included, oldest first; "
    "never the secret.",
    responses={
        "200": account_ok({"data": array(ref("WebhookEndpoint"))}, "The endpoints."),
        "404": NO_CONSUMER,
    },
)

CREATE_WEBHOOK_ENDPOINT = Operation(
    operation_id="createWebhookEndpoint",
    tag="Webhooks",
    summary="Register a webhook endpoint",
    description="The URL must be HTTPS, without user-info, at most 2048 characters, and "
    "its host must resolve only to public addresses. The signing secret is returned "
    "once as `secret_plaintext`. At most 16 non-revoked endpoints (402 "
    "ENDPOINT_LIMIT_REACHED).",
    body=json_body(
        "WebhookEndpointCreate",
        example={"url": "https://example.com/hooks/svc", "events": ["*"]},
    ),
    responses={
        "200": account_ok(
            {"data": ref("WebhookEndpointCreated")},
            "The new endpoint.",
            links={
                "test": ("testWebhookEndpoint", "endpoint_id"),
                "deliveries": ("listWebhookDeliveries", "endpoint_id"),
                "revoke": ("deleteWebhookEndpoint", "endpoint_id"),
            },
        ),
        "402": error("PaymentRequired", "ENDPOINT_LIMIT_REACHED."),
        "404": NO_CONSUMER,
    },
)

UPDATE_WEBHOOK_ENDPOINT = Operation(
    operation_id="updateWebhookEndpoint",
    tag="Webhooks",
    summary="Change what an endpoint receives",
    description="Only `description`, `events` and `filters` (data.updated: districts, "
    "property types, transaction types) can change; `url` and `secret` are refused with "
    "400 (register a new endpoint for another address). Applies to events published "
    "from now on. Owners and admins only.",
    path_params=ENDPOINT_ID,
    body=json_body(
        "WebhookEndpointPatch",
        example={
            "events": ["data.updated"],
            "filters": {"sigungu_codes": ["11680"], "property_types": ["office"]},
        },
    ),
    responses={
        "200": account_ok({"data": ref("WebhookEndpoint")}, "The endpoint as it is now."),
        "404": error("NotFound", "No such endpoint, or it is revoked."),
    },
)

DELETE_WEBHOOK_ENDPOINT = Operation(
    operation_id="deleteWebhookEndpoint",
    tag="Webhooks",
    summary="Revoke a webhook endpoint",
    description="Soft revoke: the record stays for the delivery log and cannot be "
    "re-activated; queued deliveries are settled unsent.",
    path_params=ENDPOINT_ID,
    responses={
        "200": confirmed("revoked", "Revoked."),
        "404": error("NotFound", "Not found, or already revoked."),
    },
)

ENABLE_WEBHOOK_ENDPOINT = Operation(
    operation_id="enableWebhookEndpoint",
    tag="Webhooks",
    summary="Re-enable a disabled endpoint",
    description="Turns `disabled_after_failure` back to `active` and resets the failure count.",
    path_params=ENDPOINT_ID,
    responses={
        "200": account_ok({"data": ref("WebhookEndpoint")}, "The endpoint, active again."),
        "404": error("NotFound", "No such endpoint."),
        "409": error("Conflict", "ENDPOINT_NOT_DISABLED: the endpoint is not disabled."),
    },
)

TEST_WEBHOOK_ENDPOINT = Operation(
    operation_id="testWebhookEndpoint",
    tag="Webhooks",
    summary="Send a test event",
    description="Sends `webhook.test` now, whatever the endpoint's event filter, signed "
    "like any event; the attempt is logged and a failure counts toward disabling. Per "
    "account: one test send at a time and 5 a minute (configurable), else 429.",
    path_params=ENDPOINT_ID,
    responses={
        "200": account_ok({"data": ref("WebhookTest")}, "The attempt's outcome."),
        "404": error("NotFound", "No such endpoint."),
        "409": error("Conflict", "ENDPOINT_NOT_ACTIVE: only active endpoints are tested."),
        "429": error("TestSendLimited"),
    },
)

LIST_WEBHOOK_DELIVERIES = Operation(
    operation_id="listWebhookDeliveries",
    tag="Webhooks",
    summary="Delivery log of an endpoint",
    description="Finished deliveries, newest first, with a 24-hour summary. An endpoint "
    "the caller does not own gives empty rows and a zero summary. Not counted against "
    "the quota.",
    path_params=ENDPOINT_ID,
    responses={
        "200": account_ok({"data": ref("DeliveryPage")}, "One page of the log."),
        "404": NO_CONSUMER,
    },
)

GET_WEBHOOK_DELIVERY = Operation(
    operation_id="getWebhookDelivery",
    tag="Webhooks",
    summary="One delivery: payload and reply",
    description="A delivery of an endpoint of the account with the exact body that was "
    "sent (the event's payload, as signed) and the receiver's answer: its HTTP status and "
    "the first 2,000 characters of its body. Members may read it. A delivery of another "
    "account is 404, like one that does not exist.",
    path_params={**ENDPOINT_ID, "delivery_id": "The delivery's id."},
    responses={
        "200": account_ok({"data": ref("DeliveryDetail")}, "The delivery."),
        "404": error("NotFound", "No such delivery of this endpoint."),
    },
)

RESEND_WEBHOOK_DELIVERY = Operation(
    operation_id="resendWebhookDelivery",
    tag="Webhooks",
    summary="Resend a delivery",
    description="Sends a finished delivery's event to its endpoint again, now: a new "
    "delivery (`trigger` `resend`, `resend_of` the one repeated) of the same event, with "
    "the same `X-Svc-Event-Id` and body, so receivers that dedupe by event id process it "
    "once; the signature is made afresh with the endpoint's current secret and time. "
    "Owners and admins only. Shares the test sends' limit (one at a time, 5 a minute per "
    "account by default, else 429); a failure counts toward disabling the endpoint.",
    path_params={**ENDPOINT_ID, "delivery_id": "The delivery to resend."},
    responses={
        "200": account_ok({"data": ref("WebhookResend")}, "The new attempt's outcome."),
        "403": error("Forbidden", "Members cannot resend."),
        "404": error("NotFound", "No such delivery of this endpoint."),
        "409": error(
            "Conflict",
            "ENDPOINT_NOT_ACTIVE: the endpoint is disabled or revoked; "
            "DELIVERY_NOT_FINISHED: the delivery is still queued or in flight.",
        ),
        "429": error("TestSendLimited"),
    },
)

# accounts of the signed-in person

LIST_MY_ACCOUNTS = Operation(
    operation_id="listMyAccounts",
    tag="Team",
    summary="Accounts I belong to",
    description="Every account the signed-in person is an active member of, with their "
    "role, and which one is current: the one the dashboard, `/api/auth/me/*` and the data "
    "API called with the session cookie act on.",
    responses={"200": account_ok({"data": array(ref("AccountChoice"))}, "The accounts.")},
)

SWITCH_ACCOUNT = Operation(
    operation_id="switchAccount",
    tag="Team",
    summary="Switch to another of my accounts",
    description="Makes an account the signed-in person is an active member of the "
    "current one, for all their sessions, until they switch again or leave it. An id of "
    "an account they are not in (or that does not exist) is 404, the same either way.",
    path_params={"consumer_id": "The account's id, from GET /api/auth/me/accounts."},
    responses={
        "200": account_ok({"data": ref("AccountChoice")}, "Now the current account."),
        "404": error("NotFound", "Not an account of yours."),
    },
)

# team

GET_TEAM = Operation(
    operation_id="getTeam",
    tag="Team",
    summary="Members, invitations and seats",
    description="Active members and unexpired pending invitations; the owner and pending "
    "invitations hold seats.",
    responses={
        "200": account_ok(
            {
                "members": array(ref("TeamMember")),
                "seat_limit": integer(minimum=1),
                "plan": string(),
            },
            "The team.",
        ),
        "404": NO_CONSUMER,
    },
)

INVITE_TEAM_MEMBER = Operation(
    operation_id="inviteTeamMember",
    tag="Team",
    summary="Invite a member",
    description="Creates a pending invitation (expires after 7 days) for an email.",
    body=json_body("TeamInviteCreate", example={"email": "ana@example.com", "role": "member"}),
    responses={
        "200": account_ok(
            {"data": ref("TeamInvite")},
            "The pending invitation.",
            links={"withdraw": ("removeTeamMember", "member_id")},
        ),
        "402": error("PaymentRequired", "SEAT_LIMIT_REACHED."),
        "404": NO_CONSUMER,
        "409": error("Conflict", "ALREADY_INVITED: already a member or invited."),
    },
)

REMOVE_TEAM_MEMBER = Operation(
    operation_id="removeTeamMember",
    tag="Team",
    summary="Remove a member or withdraw an invitation",
    description="Soft revoke; the owner cannot be removed (403).",
    path_params={"member_id": "The member's or invitation's id."},
    responses={
        "200": confirmed("removed", "Removed."),
        "404": error("NotFound", "No such member or invitation."),
    },
)

LIST_MY_INVITATIONS = Operation(
    operation_id="listMyInvitations",
    tag="Team",
    summary="Invitations addressed to me",
    description="Pending, unexpired invitations to the signed-in user's email.",
    responses={"200": account_ok({"invites": array(ref("Invitation"))}, "The invitations.")},
)

ACCEPT_INVITATION = Operation(
    operation_id="acceptInvitation",
    tag="Team",
    summary="Accept an invitation",
    description="Joins the inviting consumer with the invited role.",
    path_params={"invite_id": "The invitation's id."},
    responses={
        "200": confirmed("accepted", "Accepted."),
        "404": error("NotFound", "Not found, expired, or addressed to another email."),
    },
)
