"""The code blocks of docs/library.md run, in order, as a reader would paste them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "library.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_page_has_examples_for_each_part_of_the_surface() -> None:
    code = "\n".join(blocks())
    for name in (
        "parse_transactions",
        "pulse_rows",
        "series_rows",
        "coverage_rows",
        "index_rows",
        "summarize",
        "confidence_of",
        "Month",
        "verify",
    ):
        assert name in code, name


def test_the_examples_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {"__name__": "library_docs"}
    for number, code in enumerate(blocks(), 1):
        try:
            exec(compile(code, f"{DOC.name} block {number}", "exec"), namespace)  # noqa: S102
        except Exception as exc:  # pragma: no cover - the failure message is the point
            pytest.fail(f"block {number} of {DOC.name} failed: {exc!r}\n{code}")
    out = capsys.readouterr().out
    assert "refused: INVALID_SIGNATURE" in out
    assert "400 INVALID_PARAMS" in out
