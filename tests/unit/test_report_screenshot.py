"""The HTML report in a real browser: a headless Chromium screenshot is written and not blank
(skipped when no Chromium is installed)."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "report_screenshot.py"


def _module():
    spec = importlib.util.spec_from_file_location("report_screenshot", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_blank_png_is_told_apart(tmp_path):
    import struct
    import zlib

    shot = _module()

    def png(rows: bytes, width: int, height: int) -> bytes:
        def chunk(kind, body):
            return struct.pack(">I", len(body)) + kind + body + b"\0\0\0\0"

        header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b"")
        )

    blank, drawn = tmp_path / "blank.png", tmp_path / "drawn.png"
    blank.write_bytes(png(b"\0" + b"\xff" * 16, 16, 1))
    drawn.write_bytes(png(b"\0" + bytes(range(0, 256, 16)), 16, 1))
    assert shot.is_blank(blank) and not shot.is_blank(drawn)


@pytest.mark.skipif(_module().find_browser() is None, reason="no Chromium installed")
def test_report_screenshot(tmp_path):
    shot = _module()
    assert shot.main(["--out", str(tmp_path), "--height", "2400"]) == 0
    png = tmp_path / "report.png"
    width, height, _ = shot.png_pixels(png)
    assert (width, height) == (1280, 2400)
    assert not shot.is_blank(png)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Model versions over time" in page and "Confusion matrix" in page


@pytest.mark.skipif(_module().find_browser() is None, reason="no Chromium installed")
def test_the_rule_column_keeps_room_beside_the_numbers(tmp_path):
    """At 1280 px the ten number columns squeezed the rules table's Rule column to 260 px: a
    rule of three conditions wrapped onto 14 lines, column names broken mid-word. Measured in
    the browser: the column is at least 330 px wide and the table needs no sideways scroll."""
    import subprocess

    import numpy as np
    import pandas as pd

    from libre_lib import LibreClassifier
    from libre_lib.ops.report import build_report, render_html

    rng = np.random.default_rng(0)
    long = "average_monthly_customer_support_call_duration_in_minutes_xx"
    X = pd.DataFrame(
        {
            long: rng.normal(30, 10, 1500).round(2),
            "product_category": rng.choice([f"Product-{i:02d}" for i in range(40)], 1500),
            "region": rng.choice(["north", "south", "east", "west"], 1500),
        }
    )
    twenty = X["product_category"].isin([f"Product-{i:02d}" for i in range(20)])
    y = (X[long] > 35) & twenty | (X["region"] == "north") & (X[long] < 25)
    model = LibreClassifier(random_state=0).fit(X[:1000], y[:1000])
    assert any(len(rule) > 1 for rule in model.rules_)  # a rule of two conditions or more
    report = build_report(model, X[1000:], y[1000:], title="Who leaves?", X_train=X[:1000],
                          y_train=y[:1000])  # fmt: skip
    probe = (
        "<script>const c = document.querySelector('td.rule-text');"
        "const w = c.closest('.table-wrap');"
        "document.body.setAttribute('data-probe', [c.getBoundingClientRect().width, "
        "w.scrollWidth, w.clientWidth].join(' '));</script>"
    )
    page = tmp_path / "report.html"
    page.write_text(render_html(report).replace("</body>", probe + "</body>"), encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--dump-dom"]
    command = [_module().find_browser(), *flags, "--window-size=1280,2000", page.as_uri()]
    dom = subprocess.run(command, check=True, capture_output=True, text=True, timeout=180).stdout
    width, scrolled, shown = map(float, dom.split('data-probe="', 1)[1].split('"', 1)[0].split())
    assert width >= 330, width
    assert scrolled <= shown + 1, (scrolled, shown)


@pytest.mark.skipif(_module().find_browser() is None, reason="no Chromium installed")
def test_figures_keep_a_readable_size_on_a_phone(tmp_path):
    """At 390 px the 760-wide figures shrank to half: axis labels and legends 5-6 px tall.
    They now keep 560 px and scroll sideways in their own box."""
    import subprocess

    shot = _module()
    probe = (
        "<script>const f = document.querySelector('svg.figure');"
        "document.body.setAttribute('data-probe', [f.getBoundingClientRect().width, "
        "f.closest('.figure-wrap').clientWidth, document.documentElement.scrollWidth, "
        "window.innerWidth].join(' '));</script>"
    )
    page = tmp_path / "report.html"
    page.write_text(shot.sample_report_html().replace("</body>", probe + "</body>"), "utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--dump-dom"]
    command = [shot.find_browser(), *flags, "--window-size=390,2000", page.as_uri()]
    dom = subprocess.run(command, check=True, capture_output=True, text=True, timeout=180).stdout
    probed = dom.split('data-probe="', 1)[1].split('"', 1)[0].split()
    drawn, box, page_width, window = map(float, probed)
    assert window < 640  # the phone layout (headless Chromium's narrowest window is 500 px)
    assert drawn >= 550, drawn
    assert box < drawn and page_width <= window, probed  # the figure's box scrolls, the page not
