"""``svc openapi``: print the OpenAPI document, or write (or check) the reference pages.

``svc openapi`` prints the document a server with this configuration serves at
``/api/v1/openapi.json``. ``svc openapi --docs DIR`` writes the Markdown reference (one
page per tag) into DIR, removing pages it no longer makes; with ``--check`` it writes
nothing and exits 1 when DIR differs from what it would write. The pages use the
default server address and limits, so they do not depend on where they are built.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from svc_server.app import routes
from svc_server.commands.base import command_parser, config_from_args
from svc_server.openapi import build_document
from svc_server.openapi.reference import render_pages


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = command_parser(sub, common, "openapi", cmd_openapi)
    p.add_argument("--docs", type=Path, metavar="DIR", help="write the reference pages into DIR")
    p.add_argument(
        "--check",
        action="store_true",
        help="with --docs: write nothing; exit 1 when DIR is not what would be written",
    )


def reference_pages() -> dict[str, str]:
    """The reference pages, built from the routing table with default settings."""
    return render_pages(build_document(routes.ROUTES))


def stale_pages(directory: Path, pages: dict[str, str]) -> list[str]:
    """Names of pages in ``directory`` that differ from ``pages``, are missing or extra."""
    present = {p.name for p in directory.glob("*.md")} if directory.is_dir() else set()
    out = [name for name in sorted(set(pages) | present) if name not in pages]
    for name, text in sorted(pages.items()):
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            out.append(name)
    return sorted(out)


def cmd_openapi(args: argparse.Namespace) -> int:
    """Print the OpenAPI 3.1 document served at /api/v1/openapi.json, or with --docs DIR
    write the Markdown API reference generated from it."""
    if args.docs is None:
        if args.check:
            print("svc: error: --check needs --docs DIR", file=sys.stderr)
            return 2
        config = config_from_args(args)
        document = build_document(
            routes.ROUTES,
            server_url=config.public_url,
            max_body_bytes=config.max_body_bytes,
            max_url_bytes=config.max_url_bytes,
        )
        print(json.dumps(document, ensure_ascii=False, indent=2))
        return 0
    pages = reference_pages()
    stale = stale_pages(args.docs, pages)
    if args.check:
        for name in stale:
            print(f"{args.docs / name}: out of date (run svc openapi --docs {args.docs})")
        return 1 if stale else 0
    args.docs.mkdir(parents=True, exist_ok=True)
    for name in stale:
        path = args.docs / name
        if name in pages:
            path.write_text(pages[name], encoding="utf-8")
        else:
            path.unlink()
    print(f"{args.docs}: {len(pages)} pages, {len(stale)} changed")
    return 0
