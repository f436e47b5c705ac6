"""A real headless Chromium for the HTML reports' tests (Debian's chromium and chromium-driver, driven by selenium
from PyPI). `browser()` opens one, or says why there is none: its tests then skip with that reason."""
from __future__ import annotations

import shutil
import tempfile

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
DRIVER = ("/usr/bin/chromedriver",)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1300,900")


def missing() -> str | None:
    """Why no browser can run here, or None."""
    import importlib.util
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (pip install selenium): no browser to render the HTML reports in"
    if not any(shutil.which(p) for p in CHROMIUM):
        return "no Chromium at /usr/bin/chromium (apt-get install chromium chromium-driver)"
    if not any(shutil.which(p) for p in DRIVER):
        return "no chromedriver at /usr/bin/chromedriver (apt-get install chromium-driver)"
    return None


def browser():
    """A headless Chromium with a fresh profile (the caller quits it)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = next(p for p in CHROMIUM if shutil.which(p))
    for flag in (*FLAGS, f"--user-data-dir={tempfile.mkdtemp(prefix='opindex-chromium-')}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(next(p for p in DRIVER if shutil.which(p))), options=options)
