"""Run every benchmark and print one table of figures and ratios (``python3 dev.py bench``).

Each figure is measured side by side with its baseline in the same run:

| benchmark | svc | baseline |
|---|---|---|
| signing | ``svc_core.webhooks.signing.verify`` (parses JSON) | stripe-python ``Webhook.construct_event`` (parses JSON); also ``verify_header`` alone (no parse) |
| ingest | ``svc ingest rtms-commercial`` rows/s; also the bare XML read | ``sqlite3.executemany`` of the same rows |
| realestate | pulse/series (cached and cold)/coverage at 200k and 2M | the same at 200k (ratio 2M/200k) |
| http | pulse through ``svc serve`` (granian); also under gunicorn, and with admission and settlement, then also the key lookup, stubbed | a bare werkzeug app, same body size and settings, under the same server and under gunicorn (the old floor), rounds interleaved; pulse p99 while 200 slow clients hold connections |
| national (only when named) | the whole country from files at 500k and 5M deals (``--quick``: 50k, 500k): the national load, then every data endpoint and worker memory through ``svc serve``, SQLite and (``--pg-url``) PostgreSQL | the same figures at the small size, written over the last year at the large store's density so both hold cohorts of one size (``national.py --cohorts same``; ratio large/small) |
| multihost (only when named, ``--pg-url``) | pulse through two ``svc serve`` processes on one PostgreSQL at once | one process alone, rounds interleaved |
| peers | pulse through ``svc serve`` (granian), on SQLite and (``--pg-url``) PostgreSQL; p99 while ``svc ingest`` writes; RSS per worker | FastAPI under uvicorn querying per request, and caching its answer while metering each call with a write; Datasette's canned query; the bare app; pulse before issue 17 under gunicorn (``--baseline-rev``), rounds interleaved |

``--quick`` shrinks every data set so the whole run takes about a minute; the full run
takes about ten (it builds a 2M-transaction store twice).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", HERE / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small data sets")
    parser.add_argument(
        "--only",
        nargs="*",
        help="signing ingest realestate http peers (the default set); national, multihost "
        "(--pg-url) run only when named",
    )
    parser.add_argument(
        "--http-db", help="http, peers: reuse a store built earlier (bench/http_bench.py --db)"
    )
    parser.add_argument(
        "--pg-url", help="peers: also pulse on PostgreSQL (a schema in the URL's search_path)"
    )
    parser.add_argument(
        "--baseline-rev", help="peers: also pulse at this git revision, under gunicorn"
    )
    args = parser.parse_args()
    wanted = set(args.only or ["signing", "ingest", "realestate", "http", "peers"])
    rows: list[tuple[str, str, str, str, str]] = []
    results: dict[str, Any] = {}

    if "signing" in wanted:
        r = load("signing_bench").main(5_000 if args.quick else 20_000)
        results["signing"] = r
        rows.append(
            (
                "verify+parse vs construct_event (µs/call)",
                f"{r['svc_verify_us']:.1f}",
                f"{r['stripe_construct_event_us']:.1f}",
                f"{r['ratio']:.2f}",
                "<= 1.00",
            )
        )
        rows.append(
            (
                "verify+parse vs verify_header, no parse (µs/call)",
                f"{r['svc_verify_us']:.1f}",
                f"{r['stripe_verify_header_us']:.1f}",
                f"{r['svc_verify_us'] / r['stripe_verify_header_us']:.2f}",
                "",
            )
        )
    if "ingest" in wanted:
        r = load("ingest_bench").main(10_000 if args.quick else 100_000)
        results["ingest"] = r
        rows.append(
            (
                "ingest rtms-commercial (rows/s)",
                f"{r['svc_rows_per_s']:.0f}",
                f"{r['executemany_rows_per_s']:.0f}",
                f"{r['ratio']:.2f}",
                ">= 0.50",
            )
        )
        rows.append(
            (
                "XML read alone, ElementTree C (rows/s)",
                f"{r['xml_read_rows_per_s']:.0f}",
                f"{r['executemany_rows_per_s']:.0f}",
                f"{r['xml_read_ratio']:.2f}",
                "",
            )
        )
    if "realestate" in wanted and (HERE / "realestate.py").exists():
        module = load("realestate")
        r = module.main(["--quick"] if args.quick else [])
        results["realestate"] = r
        for name, value in (r or {}).get("ratios", {}).items():
            target = "< 1.50" if name.split()[0] in ("pulse", "coverage") else ""
            small, large = (
                f"{n // 1000}k" if n < 1_000_000 else f"{n // 1_000_000}M" for n in r["sizes"]
            )
            rows.append((f"{name} p50 {large}/{small}", "", "", f"{value:.2f}", target))
    if "http" in wanted:
        r = load("http_bench").main(
            [
                "--transactions",
                "200000" if args.quick else "2000000",
                "--duration",  # 8 s rounds: 3 s ones put pulse/bare anywhere in 0.50-0.58
                "5" if args.quick else "24",
                "--decompose",
                *(["--db", args.http_db] if args.http_db else []),
            ]
        )
        results["http"] = r
        fig = r["figures"]
        old_floor = fig["bare_gunicorn"]["rps"]
        rows.append(
            (
                "pulse vs plain granian floor: bare app, granian --interface wsgi (req/s)",
                f"{r['pulse']['rps']:.0f}",
                f"{fig['plain']['rps']:.0f}",
                f"{r['ratio_pulse_vs_plain']:.2f}",
                ">= 0.50",
            )
        )
        rounds = sorted(r["ratio_pulse_vs_plain_rounds"])
        rows.append(
            (
                "  the same, per interleaved round: lowest, median, highest",
                "",
                "",
                f"{rounds[0]:.2f}/{rounds[len(rounds) // 2]:.2f}/{rounds[-1]:.2f}",
                "",
            )
        )
        rows.append(
            (
                "pulse vs bare app, both under svc's granian front (req/s)",
                f"{r['pulse']['rps']:.0f}",
                f"{r['bare']['rps']:.0f}",
                f"{r['ratio_rps']:.2f}",
                "",
            )
        )
        rows.append(
            (
                "pulse (granian) vs bare app under gunicorn (req/s)",
                f"{r['pulse']['rps']:.0f}",
                f"{old_floor:.0f}",
                f"{r['ratio_pulse_vs_gunicorn_floor']:.2f}",
                "",
            )
        )
        rows.append(
            (
                "bare app: granian front vs gunicorn (req/s)",
                f"{r['bare']['rps']:.0f}",
                f"{old_floor:.0f}",
                f"{r['ratio_floor_vs_gunicorn_floor']:.2f}",
                "",
            )
        )
        rows.append(
            (
                "bare app: svc's granian front vs plain granian (req/s)",
                f"{r['bare']['rps']:.0f}",
                f"{fig['plain']['rps']:.0f}",
                f"{r['bare']['rps'] / fig['plain']['rps']:.2f}",
                "",
            )
        )
        rows.append(
            (
                "pulse: granian vs gunicorn, this code (req/s)",
                f"{r['pulse']['rps']:.0f}",
                f"{fig['pulse_gunicorn']['rps']:.0f}",
                f"{r['ratio_pulse_vs_pulse_gunicorn']:.2f}",
                "",  # the 3x target is against pulse before issue 17: the peers run
            )
        )
        slow, slow_old = r["slow_clients"], r["slow_clients_gunicorn"]
        rows.append(
            (
                f"pulse p99 (ms), {slow['count']} slow clients vs idle",
                f"{slow['p99']:.1f}",
                f"{r['slow_clients_idle']['p99']:.1f}",
                f"{slow['p99'] / r['slow_clients_idle']['p99']:.2f}",
                "<= 1.00",
            )
        )
        rows.append(
            (
                f"pulse req/s, {slow['count']} slow clients vs idle",
                f"{slow['rps']:.0f}",
                f"{r['slow_clients_idle']['rps']:.0f}",
                f"{slow['rps'] / r['slow_clients_idle']['rps']:.2f}",
                "",
            )
        )
        rows.append(
            (
                f"  same under gunicorn: req/s with {slow['count']} slow clients vs idle",
                f"{slow_old['rps']:.0f}",
                f"{fig['pulse_gunicorn']['rps']:.0f}",
                f"{slow_old['rps'] / fig['pulse_gunicorn']['rps']:.2f}",
                "",
            )
        )
        for stub, label in (("admit", "admission"), ("admit,key", "admission+key lookup")):
            if stub in r.get("stubbed", {}):
                rps = r["stubbed"][stub]["rps"]
                rows.append(
                    (
                        f"  same, {label} stubbed (req/s)",
                        f"{rps:.0f}",
                        f"{r['bare']['rps']:.0f}",
                        f"{rps / r['bare']['rps']:.2f}",
                        "",
                    )
                )
        rows.append(
            (
                "pulse vs bare app, granian, p50/p99 (ms)",
                f"{r['pulse']['p50']:.1f}/{r['pulse']['p99']:.1f}",
                f"{r['bare']['p50']:.1f}/{r['bare']['p99']:.1f}",
                "",
                "",
            )
        )
    if "peers" in wanted:
        r = load("peers_bench").main(
            [
                "--transactions",
                "200000" if args.quick else "2000000",
                "--duration",
                "6" if args.quick else "12",
                *(["--db", args.http_db] if args.http_db else []),
                *(["--pg-url", args.pg_url] if args.pg_url else []),
                *(["--baseline-rev", args.baseline_rev] if args.baseline_rev else []),
            ]
        )
        results["peers"] = r
        rows.extend(peer_rows(r))
    if "national" in wanted:  # opt-in: minutes at 500k, most of an hour at 5M
        quick = ["--quick"] if args.quick else []
        # the sizes at equal cohorts: what the store's size alone costs (the goal's figure)
        pg = ["--pg-url", args.pg_url] if args.pg_url else []
        r = load("national").main([*quick, "--cohorts", "same", *pg])
        results["national"] = r
        small, large = r["sizes"]
        for backend in ("sqlite", "postgres"):
            if backend not in r:
                continue
            figures = r[backend]
            for name, value in figures[large].items():
                base = figures[small].get(name)
                goal = ""
                if name == "national load s":
                    goal = "< 600"
                elif name != "transactions csv ms" and (
                    name.endswith((" ms", "per MiB")) or name == "worker RSS MiB"
                ):  # the CSV is the whole selection: its time per MiB is what must stay flat
                    goal = "<= 1.20"
                rows.append(
                    (
                        f"national {backend}: {name}, {large:,} vs {small:,} deals, same cohorts",
                        f"{value:.1f}",
                        f"{base:.1f}" if base else "",
                        f"{value / base:.2f}" if base else "",
                        goal,
                    )
                )
    if "multihost" in wanted and args.pg_url:
        r = load("multihost").main(["--pg-url", args.pg_url])
        results["multihost"] = r
        rows.append(
            (
                f"pulse, two svc serve vs one on one PostgreSQL ({r['cores']} cores) (req/s)",
                f"{r['two processes rps (median)']:.0f}",
                f"{r['one process rps (median)']:.0f}",
                f"{r['ratio two / one']:.2f}",
                ">= 1.80",
            )
        )

    print()
    w = max(len("benchmark"), *(len(row[0]) for row in rows))
    print(f"| {'benchmark':<{w}} | {'svc':>12} | {'baseline':>12} | {'ratio':>6} | {'target':>8} |")
    print(f"|{'-' * (w + 2)}|{'-' * 14}|{'-' * 14}|{'-' * 8}|{'-' * 10}|")
    for name, ours, base, ratio, target in rows:
        print(f"| {name:<{w}} | {ours:>12} | {base:>12} | {ratio:>6} | {target:>8} |")
    (HERE / "out").mkdir(exist_ok=True)
    (HERE / "out" / "last.json").write_text(json.dumps(results, indent=2, default=str))
    sys.stdout.flush()


def peer_rows(r: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """The table rows of ``peers_bench``: pulse beside each baseline of the same run."""
    fig = r["figures"]
    pulse = fig["pulse"]["rps"]
    rows = []
    for name, label, target in (
        ("bare", "bare app, same granian front", ">= 0.50"),
        ("pulse_before", "pulse before issue 17, gunicorn", ">= 3.00"),
        ("pulse_gunicorn", "pulse (this code) under gunicorn", ""),
        ("fastapi_cached", "FastAPI caching + metering write", ">= 2.00"),
        ("fastapi_query", "FastAPI querying per request", ""),
        ("datasette", "Datasette canned query", ">= 50.0"),
    ):
        if name in fig:
            base = fig[name]["rps"]
            rows.append(
                (
                    f"pulse vs {label} (req/s)",
                    f"{pulse:.0f}",
                    f"{base:.0f}",
                    f"{pulse / base:.2f}",
                    target,
                )
            )
    if "pulse_pg" in fig:
        pg = fig["pulse_pg"]["rps"]
        rows.append(
            (
                "pulse on PostgreSQL vs SQLite (req/s)",
                f"{pg:.0f}",
                f"{pulse:.0f}",
                f"{pg / pulse:.2f}",
                "",
            )
        )
    for key, db in (("during_ingest", "SQLite"), ("during_ingest_pg", "PostgreSQL")):
        during = r.get(key)
        if not during:
            continue
        busy, idle = during["ingest"], during["idle"]
        rows.append(
            (
                f"pulse p99 (ms), {db}, while svc ingest writes {during['items']:,} deals vs idle",
                f"{busy['p99']:.1f}",
                f"{idle['p99']:.1f}",
                f"{busy['p99'] / idle['p99']:.2f}",
                "<= 3.00",
            )
        )
        stalled = sum(int(x.get("timeouts", 0)) for x in during["ingest_rounds"])
        rows.append(
            (
                f"  calls past wrk's 2 s timeout (not in p99), {db}, loaded / idle rounds",
                f"{stalled}",
                f"{sum(int(x.get('timeouts', 0)) for x in during['idle_rounds'])}",
                "",
                "0",
            )
        )
        rows.append(
            (
                f"pulse req/s, {db}, while svc ingest writes vs idle",
                f"{busy['rps']:.0f}",
                f"{idle['rps']:.0f}",
                f"{busy['rps'] / idle['rps']:.2f}",
                "",
            )
        )
    for name, sizes in r.get("rss_mb", {}).items():
        if name.startswith("pulse") or name.startswith("fastapi") or name == "datasette":
            shown = "/".join(f"{v:.0f}" for v in sizes)
            rows.append((f"RSS per worker (MiB), {name}", shown, "", "", ""))
    return rows


if __name__ == "__main__":
    main()
