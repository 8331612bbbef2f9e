"""The whole country in one store (issue 32, item 2): a national load from files, then
every data endpoint through ``svc serve``, at two sizes, side by side.

For each size (500,000 and 5,000,000 deals; ``--quick``: 50,000 and 500,000) it writes
RTMS open-API XML files (the three kinds svc syncs: commercial sales, officetel sales,
officetel leases, each file one district's year, items shaped like the real samples in
``tests/fixtures/molit``) over every district in use (``svc_core.regions``) and ten
years, a few districts far busier than the rest as in the real data; loads them with
``svc ingest DIR`` (the command a user runs, timed whole: the national load); starts
``svc serve`` with one worker and times, over HTTP with an enterprise key:

- ``first answer``: the first pulse after the load (server started, nothing cached;
  the median of three servers started one after the other);
- ``pulse cold``: pulse of 20 districts never asked before (each reads its cohort);
- ``pulse``, ``series`` (12 months), ``coverage`` (top 200, no district),
  ``dimensions``, ``transactions page`` (100 records, then the next by cursor):
  median of repeated calls;
- ``transactions csv``: the busiest district's listing of the last year as CSV (the
  whole selection: ``limit`` does not apply to CSV), time to the last byte (median of three), and per MiB
  (the listings read the last year, which both stores of ``--cohorts same`` hold alike:
  over two years the large store's selection held twice the small one's deals);

and the worker's resident memory after the calls. Each figure is printed for both sizes
with the ratio large/small (goal ≤ 1.2: cost follows the cohort, not the store), memory
likewise (goal: flat), and the national load's time (goal: under 10 minutes at 5M).
With ``--pg-url`` the same runs on PostgreSQL too (each size in its own schema).

By default both sizes spread their deals over the same ten years, so every cohort of
the large store holds ten times the deals of the small one's, and a cold pulse reads ten
times the rows. ``--cohorts same`` writes the small size over the last year only, at
the large store's density: the two stores then hold cohorts of the same size, and the
ratio shows what the store's size alone costs. With ``--dir``, a store an earlier run
loaded there is measured again without loading it anew.

    python bench/national.py --quick
    python bench/national.py --pg-url postgresql://postgres@127.0.0.1:5432/test
    python bench/national.py --dir /tmp/nat --cohorts same
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from http_bench import free_port, start, status_url, unmetered_key  # noqa: E402

YEARS = tuple(range(2016, 2026))
BUSY = ("11680", "11650", "11440", "11140", "41135")
"""Gangnam, Seocho, Mapo, Jung-gu, Seongnam Bundang: a tenth of the deals each kind."""
KINDS = {
    # kind: (share of the deals, sample file whose first item is the template)
    "commercial": (0.45, "NRG_11680_202506.xml"),
    "officetel-trade": (0.25, "OFFICETEL_11680_202506.xml"),
    "officetel-rent": (0.30, "OFFICETEL_RENT_11680_202506.xml"),
}
USES = ("업무", "제1종근린생활", "제2종근린생활", "판매", "숙박", "기타")
API = "/api/v1/real-estate"


def template(name: str) -> list[tuple[str, str]]:
    """The first item of a real sample, as (tag, text) pairs in document order."""
    import xml.etree.ElementTree as ET

    root = ET.parse(ROOT / "tests" / "fixtures" / "molit" / name).getroot()  # noqa: S314
    item = next(root.iter("item"))
    return [(child.tag, child.text or " ") for child in item]


def item_xml(
    fields: list[tuple[str, str]], rng: random.Random, code: str, year: int, month: int
) -> str:
    """One item: the template with the varying fields drawn anew."""
    out = ["<item>"]
    for tag, text in fields:
        if tag == "sggCd":
            text = code
        elif tag == "dealYear":
            text = str(year)
        elif tag == "dealMonth":
            text = str(month)
        elif tag == "dealDay":
            text = str(rng.randrange(1, 29))
        elif tag == "dealAmount":
            text = f"{rng.randrange(5_000, 900_000):,}"
        elif tag == "deposit":
            text = f"{rng.randrange(500, 90_000):,}"
        elif tag == "monthlyRent":
            text = str(rng.choice((0, 0, rng.randrange(30, 400))))
        elif tag in ("buildingAr", "excluUseAr"):
            text = f"{rng.uniform(18, 2_000):.2f}"
        elif tag == "jibun":
            text = f"{rng.randrange(1, 2_000)}-{rng.randrange(1, 99)}"
        elif tag == "umdNm":
            text = f"동{rng.randrange(12)}"
        elif tag == "buildingUse":
            text = rng.choice(USES)
        elif tag == "floor":
            text = str(rng.randrange(1, 30))
        out.append(f"<{tag}>{text}</{tag}>")
    out.append("</item>")
    return "".join(out)


def write_files(work: Path, total: int, seed: int, years: tuple[int, ...] = YEARS) -> int:
    """RTMS XML files of ``total`` deals over ``years`` (one file per kind, district and
    year); the number of files."""
    from svc_core.regions import regions_in_use

    rng = random.Random(seed)
    codes = [r.code for r in regions_in_use()]
    weights = [25.0 if c in BUSY else rng.lognormvariate(0, 0.8) for c in codes]
    scale = sum(weights)
    files = 0
    for kind, (share, sample) in KINDS.items():
        fields = template(sample)
        folder = work / kind
        folder.mkdir(parents=True)
        for code, weight in zip(codes, weights, strict=True):
            per_year = max(1, round(total * share * weight / scale / len(years)))
            for year in years:
                items = [
                    item_xml(fields, rng, code, year, rng.randrange(1, 13)) for _ in range(per_year)
                ]
                body = (
                    '<?xml version="1.0" encoding="utf-8"?><response><header><resultCode>000'
                    "</resultCode><resultMsg>OK</resultMsg></header><body><items>"
                    + "".join(items)
                    + "</items></body></response>"
                )
                (folder / f"{code}_{year}.xml").write_text(body, encoding="utf-8")
                files += 1
    return files


def svc(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "svc_server", *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )


def fetch(url: str, key: str) -> tuple[float, bytes, dict[str, str]]:
    """One call's time to its last byte (ms), body and headers. A 404 (a district with
    too few deals in the window, at the small size) is timed like an answer: it reads
    the same cohort."""
    request = urllib.request.Request(url, headers={"X-API-Key": key})
    t = time.perf_counter()
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            body = response.read()
            headers = dict(response.headers)
    except urllib.error.HTTPError as error:
        if error.code != 404:
            raise
        body, headers = error.read(), dict(error.headers)
    return (time.perf_counter() - t) * 1000, body, headers


def median_ms(call: Callable[[], float], runs: int) -> float:
    return statistics.median(call() for _ in range(runs))


def worker_rss_mib(server_pid: int) -> float:
    """Resident memory of the server's largest child (its worker), MiB."""
    best = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields.get("PPid", "0").strip()) != server_pid:
            continue
        best = max(best, int(fields.get("VmRSS", "0 kB").split()[0]))
    return best / 1024


PULSE = "/pulse?sigungu_code=11680&property_type=office&transaction_type=sale"
FIRST_RUNS = 3
"""Servers started for ``first answer`` (its median): one call of one server is noise."""


def serve(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    """A fresh ``svc serve`` (one worker) on the store, and its API's base URL."""
    port = free_port()
    server = start(
        [sys.executable, "-m", "svc_server", "serve"],
        dict(env, SVC_PORT=str(port), SVC_WORKERS="1", SVC_THREADS="4"),
        status_url(port),
    )
    return server, f"http://127.0.0.1:{port}{API}"


def first_answer(env: dict[str, str], key: str) -> float:
    """The first pulse of a server just started (nothing cached), in ms."""
    server, base = serve(env)
    try:
        return fetch(base + PULSE, key)[0]
    finally:
        server.terminate()
        server.wait()


def measure(env: dict[str, str], runs: int) -> dict[str, float]:
    """Every figure of one loaded store, through fresh ``svc serve`` processes."""
    key = unmetered_key(env)
    out: dict[str, float] = {
        "first answer ms": statistics.median(first_answer(env, key) for _ in range(FIRST_RUNS))
    }
    server, base = serve(env)
    try:
        pulse = base + PULSE
        fetch(pulse, key)
        from svc_core.regions import regions_in_use

        others = [r.code for r in regions_in_use() if r.code not in BUSY][:20]
        out["pulse cold ms"] = statistics.median(
            fetch(f"{base}/pulse?sigungu_code={code}", key)[0] for code in others
        )
        out["pulse ms"] = median_ms(lambda: fetch(pulse, key)[0], runs)
        series = f"{base}/pulse/series?sigungu_code=11680&from_period=2025-01&to_period=2025-12"
        out["series ms"] = median_ms(lambda: fetch(series, key)[0], runs)
        coverage = f"{base}/coverage?limit=200"
        out["coverage ms"] = median_ms(lambda: fetch(coverage, key)[0], runs)
        dimensions = f"{base}/dimensions"
        out["dimensions ms"] = median_ms(lambda: fetch(dimensions, key)[0], runs)
        listing = (
            f"{base}/transactions?sigungu_code=11680&property_type=office"
            "&transaction_type=sale&from=2025-01&to=2025-12&limit=100"
        )
        out["transactions page ms"] = median_ms(lambda: fetch(listing, key)[0], runs)
        _, body, _ = fetch(listing, key)
        cursor = json.loads(body)["_meta"].get("next_cursor")
        if cursor:
            following = f"{listing}&cursor={urllib.parse.quote(cursor)}"
            out["transactions next page ms"] = median_ms(lambda: fetch(following, key)[0], runs)
        csv_url = f"{base}/transactions.csv?sigungu_code=11680&from=2025-01&to=2025-12&limit=1000"
        _, body, _ = fetch(csv_url, key)
        elapsed = median_ms(lambda: fetch(csv_url, key)[0], 3)
        out["transactions csv ms"] = elapsed  # the whole selection: limit does not apply
        out["transactions csv KiB"] = len(body) / 1024
        out["transactions csv ms per MiB"] = elapsed / (len(body) / 2**20)
        out["worker RSS MiB"] = worker_rss_mib(server.pid)
    finally:
        server.terminate()
        server.wait()
    return out


def store_name(total: int, years: tuple[int, ...]) -> str:
    """How the files, store and marker of a size are named (``500000``, ``500000_1y``)."""
    return f"{total}" if years == YEARS else f"{total}_{len(years)}y"


def marker(work: Path, backend: str, name: str) -> Path:
    """The file saying a store was loaded in ``work``, with its load time."""
    return work / f"loaded-{backend}-{name}.json"


def one_size(
    total: int,
    database_url: str,
    work: Path,
    runs: int,
    seed: int,
    years: tuple[int, ...],
    backend: str,
) -> dict[str, float]:
    """Files written, loaded with ``svc ingest``, then measured. A store this command
    loaded before in the same ``--dir`` (its ``marker`` says so) is measured again
    without loading it anew, with the load time of that run."""
    name = store_name(total, years)
    files_dir = work / f"files-{name}"
    if not files_dir.exists():
        t = time.perf_counter()
        files = write_files(files_dir, total, seed, years)
        print(
            f"wrote {files} files of ~{total:,} deals in {time.perf_counter() - t:.0f}s",
            file=sys.stderr,
        )
    env = dict(os.environ)
    env.update(
        {
            "SVC_DATABASE_URL": database_url,
            "SVC_SECRET_KEY": "bench-secret-key-0123456789",
            "SVC_LOG_LEVEL": "WARNING",
        }
    )
    loaded = marker(work, backend, name)
    if loaded.exists():
        out: dict[str, float] = json.loads(loaded.read_text())
        print(f"{name} on {backend}: loaded by an earlier run", file=sys.stderr)
    else:
        svc(env, "init")
        t = time.perf_counter()
        for kind in KINDS:
            svc(env, "ingest", f"rtms-{kind}", str(files_dir / kind))
        out = {"national load s": time.perf_counter() - t}
        loaded.write_text(json.dumps(out))
    out.update(measure(env, runs))
    print(f"{total:,} on {database_url.split(':', 1)[0]}: {json.dumps(out)}", file=sys.stderr)
    return out


def pg_url(base: str, schema: str, *, keep: bool = False) -> str:
    """``base`` with ``schema`` (created anew unless ``keep``) as its search path."""
    import psycopg

    if not keep:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            conn.execute(f"CREATE SCHEMA {schema}")
    joiner = "&" if "?" in base else "?"
    return f"{base}{joiner}options=-csearch_path%3D{schema}"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="50,000 and 500,000 deals")
    parser.add_argument("--sizes", type=int, nargs=2, help="the two sizes (small large)")
    parser.add_argument("--runs", type=int, default=15, help="calls per warm figure")
    parser.add_argument("--pg-url", help="also on PostgreSQL (a schema per size is created)")
    parser.add_argument("--dir", type=Path, help="keep the files and stores here")
    parser.add_argument(
        "--cohorts",
        choices=("spread", "same"),
        default="spread",
        help="spread: both sizes over ten years (the large store's cohorts are ten times "
        "the small one's); same: the small size over the last years only, so its cohorts "
        "are the large store's (growth with the store at equal cohorts)",
    )
    args = parser.parse_args(argv)
    small, large = args.sizes or ((50_000, 500_000) if args.quick else (500_000, 5_000_000))
    years = {large: YEARS, small: YEARS}
    if args.cohorts == "same":
        years[small] = YEARS[-max(1, round(len(YEARS) * small / large)) :]
    work = args.dir or Path(tempfile.mkdtemp(prefix="svc-national-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"sizes": [small, large]}

    def tag(n: int) -> str:
        return store_name(n, years[n])

    backends: dict[str, Callable[[int], str]] = {
        "sqlite": lambda n: f"sqlite:///{work / f'national-{tag(n)}.db'}"
    }
    if args.pg_url:
        backends["postgres"] = lambda n: pg_url(
            args.pg_url,
            f"bench_national_{tag(n)}",
            keep=marker(work, "postgres", tag(n)).exists(),
        )
    try:
        for backend, url_of in backends.items():
            figures = {
                n: one_size(n, url_of(n), work, args.runs, n, years[n], backend)
                for n in (small, large)
            }
            results[backend] = figures
            print(f"\n{backend}: {small:,} vs {large:,} deals")
            print(f"{'figure':28} {'small':>10} {'large':>10} {'ratio':>7}")
            for name in figures[large]:
                a, b = figures[small].get(name), figures[large][name]
                ratio = f"{b / a:7.2f}" if a else "      -"
                print(f"{name:28} {a or 0:10.1f} {b:10.1f} {ratio}")
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
