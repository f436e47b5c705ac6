"""The HTML reports in a real browser (issue 29, items 7 and 9 of "what to build"): the profile report's picture
(GPU time by layer, an icicle by module -> op -> kernel) above its table, self-contained, each location a link; a
notebook trace whose branches load when opened; the coverage matrix, its filter and its links. Headless Chromium
from Debian's packages (tests/browser.py); the browser tests skip, saying why, where none is installed."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from browser import browser, missing
from conftest import SAMPLE

PROFILE = Path(__file__).resolve().parent / "data" / "train_step_h200_torch2.11.json.gz"
needs_browser = pytest.mark.skipif(missing() is not None, reason=missing() or "")


def profile_page(sample_db, tmp_path) -> Path:
    from opindex.cli import main
    result = CliRunner().invoke(main, ["profile", str(PROFILE), "--html", "--db", str(sample_db)])
    assert result.exit_code == 0
    page = tmp_path / "profile.html"
    page.write_text(result.stdout, encoding="utf-8")
    return page


def test_the_profile_report_is_a_picture_then_the_table(ix, sample_db, tmp_path):
    from opindex.profile.picture import layer_of
    rows = ix.profile(PROFILE)
    text = profile_page(sample_db, tmp_path).read_text(encoding="utf-8")
    assert text.index("<h2>GPU time by layer</h2>") < text.index("<h2>GPU time by module → op → kernel</h2>") \
        < text.index("<h2>Kernels, largest GPU time first</h2>") < text.index("<details id=k1>")
    total = sum(r["gpu_us"] for r in rows)
    said = re.findall(r'<span class="key"><i style="background:#\w+"></i>([^<:]+): ([\d.]+)% \(([\d,.]+) us\)</span>',
                      text)
    assert said == [(name, f"{100 * us / total:.1f}", f"{us:,.1f}") for name, us in (
        (name, sum(r["gpu_us"] for r in rows if layer_of(r) == name)) for name in (
            "vendor library", "PyTorch's own kernels", "generated code", "CUDA runtime (copies, fills)",
            "not in this checkout")) if us]
    assert len(said) >= 2
    assert not re.search(r"(?i)https?://|<link|src=|@import|url\(", text)  # self-contained: nothing to fetch


@needs_browser
def test_the_profile_report_renders_links_and_opens_in_chromium(sample_db, tmp_path):
    from selenium.webdriver.common.by import By
    page = profile_page(sample_db, tmp_path)
    b = browser()
    try:
        b.get(page.as_uri())
        assert b.title == "opindex profile"
        assert b.execute_script("return performance.getEntriesByType('resource').length") == 0  # fetched nothing
        bar = b.find_element(By.CSS_SELECTOR, ".layers")
        segs = bar.find_elements(By.CSS_SELECTOR, ".seg")
        assert abs(sum(s.size["width"] for s in segs) - bar.size["width"]) <= len(segs) + 2  # the bar is whole
        ice = b.find_element(By.CSS_SELECTOR, ".ice")
        modules = ice.find_elements(By.XPATH, "./div[@class='node']")
        assert modules and abs(sum(m.size["width"] for m in modules) - ice.size["width"]) <= len(modules) + 2
        # three levels: module, op, kernel; a kernel's box leads to its row, which opens
        kernel = ice.find_element(By.CSS_SELECTOR, ".kids .kids a.lab")
        target = kernel.get_attribute("href").rsplit("#", 1)[1]
        row = b.find_element(By.ID, target)
        assert row.get_attribute("open") is None
        b.execute_script("arguments[0].click()", kernel)
        assert b.execute_script("return document.getElementById(arguments[0]).open", target) is True
        # a location links to its file in the checkout
        link = b.find_element(By.CSS_SELECTOR, ".loc a")
        href = link.get_attribute("href")
        assert href.startswith(f"file://{SAMPLE}/") and Path(href[len("file://"):]).is_file()
        assert link.text == href[len(f"file://{SAMPLE}/"):] + ":" + link.text.rsplit(":", 1)[1]
    finally:
        b.quit()


@needs_browser
def test_a_notebook_trace_loads_a_branch_when_it_opens(ix, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    t = ix.trace("nn.LSTM")
    page = tmp_path / "trace.html"
    page.write_text(f"<!doctype html><meta charset=utf-8><body>{t._repr_html_()}</body>", encoding="utf-8")
    b = browser()
    try:
        b.get(page.as_uri())
        first = b.find_element(By.CSS_SELECTOR, "details[data-h]")
        hop = int(first.get_attribute("data-h"))
        below = [h for h in t.hops if h.parent == hop]
        assert "shows them" in first.find_element(By.CSS_SELECTOR, ".b").get_attribute("textContent")
        first.find_element(By.TAG_NAME, "summary").click()
        WebDriverWait(b, 10).until(lambda _: first.get_attribute("data-loaded") == "1")
        items = first.find_elements(By.XPATH, "./div[@class='b']/ul/li")
        assert [li.find_element(By.TAG_NAME, "code").text for li in items] == [h.name for h in below]
        # each file:line shown, on the chain and in a loaded branch, links to the file in the checkout
        chain_link = b.find_element(By.CSS_SELECTOR, "ol > li > a.w")
        file, line = chain_link.text.rsplit(":", 1)
        assert chain_link.get_attribute("href") == f"file://{SAMPLE}/{file}" and line.isdigit()
        assert (SAMPLE / file).is_file()
        branch_links = [a.get_attribute("href") for a in first.find_elements(By.CSS_SELECTOR, ".b a.w")]
        assert branch_links == [f"file://{SAMPLE}/{h.file}" for h in below if h.file and h.line]
        assert not b.find_elements(By.CSS_SELECTOR, "span.w")
        nested = first.find_elements(By.CSS_SELECTOR, ".b details[data-h]")  # deeper levels load the same way
        if nested:
            nested[0].find_element(By.TAG_NAME, "summary").click()
            WebDriverWait(b, 10).until(lambda _: nested[0].get_attribute("data-loaded") == "1")
            assert nested[0].find_elements(By.CSS_SELECTOR, ".b li")
    finally:
        b.quit()


@needs_browser
def test_the_coverage_page_renders_filters_and_links_in_chromium(sample_db, tmp_path):
    """`opindex coverage --html`: one row per op (29 in the sample), the op filter hides the others, each cell with
    a location links to its kernel's file in the checkout."""
    from opindex.cli import main
    from selenium.webdriver.common.by import By
    result = CliRunner().invoke(main, ["coverage", "--html", "--db", str(sample_db)])
    assert result.exit_code == 0
    page = tmp_path / "coverage.html"
    page.write_text(result.stdout, encoding="utf-8")
    b = browser()
    try:
        b.get(page.as_uri())
        assert b.title == "opindex coverage"
        assert b.execute_script("return performance.getEntriesByType('resource').length") == 0  # fetched nothing
        shown = lambda: [r.get_attribute("data-op") for r in b.find_elements(By.CSS_SELECTOR, "tbody tr")  # noqa
                         if r.is_displayed()]
        assert len(shown()) == 29 and b.find_element(By.ID, "count").text == "29"
        b.find_element(By.ID, "q").send_keys("relu")
        assert shown() == ["aten::relu", "aten::relu_"] and b.find_element(By.ID, "count").text == "2"
        link = b.find_element(By.CSS_SELECTOR, "tr[data-op='aten::relu'] td a")
        href = link.get_attribute("href")
        assert href == f"file://{SAMPLE}/aten/src/ATen/native/native_functions.yaml" and Path(href[7:]).is_file()
        assert link.text in ("K", "I", "E", "C", "F", "K!", "I!", "E!", "C!")
    finally:
        b.quit()
