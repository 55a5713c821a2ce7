"""Headless Chromium for the report pages' tests: the system's browser driven by Playwright, no download.

The pages' scripts only run in a browser, so a test that filters, pages or opens a row needs one; where
there is none (or no Playwright), those tests skip and say why.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


def _chromium() -> str:
    for candidate in (os.environ.get("REPRO_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if candidate and shutil.which(candidate):
            return str(shutil.which(candidate))
    pytest.skip("no Chromium on PATH (install Debian's `chromium` package; .ci/run does) - browser tests skipped")


@contextmanager
def headless_chromium() -> Iterator[Any]:
    """Enter only after the event loops a fixture needs have finished: Playwright's sync API holds one."""
    executable = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[dev]') - browser tests skipped")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


def open_page(browser: Any, path: Path, rows: str) -> tuple[Any, list[str]]:
    """The page once its script has drawn the ``rows`` selector, and every error its console reports."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(path.as_uri())
    page.wait_for_selector(rows)
    return page, problems
