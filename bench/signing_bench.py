"""Signature verification: microseconds per svc ``verify`` vs stripe-python's verifier.

Both verify a valid header over the same 1 KB payload; stripe's is given a header
made with its own key derivation (the whole ``whsec_`` string as the key) so that both
take the success path. Prints JSON.

svc's ``verify`` also parses the body as JSON and returns the event, so the like-for-like
baseline is stripe's ``Webhook.construct_event`` (verify + parse + wrap in a StripeObject);
``verify_header`` alone (no parse) and ``verify_header`` + ``json.loads`` are reported too.
``ratio`` compares with ``construct_event``; ``ratio_header_plus_json`` with the bare
verify-and-parse pair.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import timeit

import stripe

from svc_core.webhooks import signing

SECRET = "whsec_" + "ab" * 32
PAYLOAD = json.dumps({"id": "evt_1", "type": "webhook.test", "data": {"pad": "x" * 960}}).encode()


def main(number: int = 20_000) -> dict[str, float]:
    now = int(time.time())
    ours = signing.sign(PAYLOAD, SECRET, now)
    stripe_sig = hmac.new(SECRET.encode(), f"{now}.".encode() + PAYLOAD, hashlib.sha256).hexdigest()
    theirs = f"t={now},v1={stripe_sig}"
    text = PAYLOAD.decode()
    svc_s = min(
        timeit.repeat(
            lambda: signing.verify(PAYLOAD, ours, SECRET, now=now), number=number, repeat=5
        )
    )
    stripe_s = min(
        timeit.repeat(
            lambda: stripe.WebhookSignature.verify_header(text, theirs, SECRET, tolerance=300),
            number=number,
            repeat=5,
        )
    )

    def header_and_json() -> object:
        stripe.WebhookSignature.verify_header(text, theirs, SECRET, tolerance=300)
        return json.loads(text)

    parse_s = min(timeit.repeat(header_and_json, number=number, repeat=5))
    construct_s = min(
        timeit.repeat(
            lambda: stripe.Webhook.construct_event(text, theirs, SECRET, tolerance=300),
            number=number,
            repeat=5,
        )
    )
    result = {
        "svc_verify_us": svc_s / number * 1e6,
        "stripe_verify_header_us": stripe_s / number * 1e6,
        "stripe_verify_header_plus_json_us": parse_s / number * 1e6,
        "stripe_construct_event_us": construct_s / number * 1e6,
    }
    result["ratio"] = result["svc_verify_us"] / result["stripe_construct_event_us"]
    result["ratio_header_plus_json"] = (
        result["svc_verify_us"] / result["stripe_verify_header_plus_json_us"]
    )
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
