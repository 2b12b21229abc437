"""Render a rule report and look at it in a real browser (headless Chromium screenshot).

    python benchmarks/report_screenshot.py [--out /tmp/libre-report] [--height 4200]

Trains LIBRE on the bundled Pima data (a 70/30 stratified split), builds the report with
labels, the data validation's expectations and a short history of model versions, writes
``report.html`` to ``--out`` and asks Chromium for a screenshot (``report.png``). The PNG is
checked to exist and not to be blank (more than a few distinct pixel values). Chromium is
looked up as ``chromium``, ``chromium-browser``, ``google-chrome`` (or ``$CHROMIUM``); without
one the script says so and exits with status 2. ``tests/unit/test_report_screenshot.py`` runs
it when a browser is installed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path
from types import SimpleNamespace

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_browser() -> str | None:
    """The path of a Chromium-like browser, or None."""
    named = os.environ.get("CHROMIUM")
    for name in ((named,) if named else ()) + BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def sample_report_html() -> str:
    """A report of a model trained on the bundled Pima data, as one HTML page."""
    from sklearn.model_selection import train_test_split

    from libre_lib import LibreClassifier
    from libre_lib.datasets import load_dataset
    from libre_lib.ops.baselines import version_trend
    from libre_lib.ops.report import build_report, render_html
    from libre_lib.ops.validation import ExpectationResult

    X, y, info = load_dataset("pima")
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y
    )
    model = LibreClassifier(random_state=0, positive_class=info.positive_class)
    model.fit(X_train, y_train)
    history = [
        SimpleNamespace(
            version=f"v000{i}-{'abcdef12'}",
            created_at=f"2025-0{i}-01",
            status=status,
            metrics={"f1": f1, "precision": 0.6, "recall": 0.6, "accuracy": acc, "n_rules": 4},
        )
        for i, (status, f1, acc) in enumerate(
            [("retired", 0.58, 0.70), ("champion", 0.62, 0.72), ("candidate", 0.61, 0.73)], 1
        )
    ]
    checks = [
        ExpectationResult("expect_column_to_exist", "bmi", True, None, (), "column present"),
        ExpectationResult(
            "expect_column_values_to_be_between", "age", True, 0, (), "0 of 768 outside [18, 100]"
        ),
    ]
    report = build_report(
        model,
        X_test,
        y_test,
        title="Who tests positive for diabetes?",
        description="Diabetes onset within five years (UCI Pima Indians Diabetes).",
        column_labels={"plasma_glucose": "glucose", "diabetes_pedigree_function": "pedigree"},
        class_labels={info.positive_class: "diabetic"},
        target_label="diabetes",
        validation_summary="Data validation passed: 2 expectations met on 768 rows.",
        validation_success=True,
        expectations=checks,
        X_train=X_train,
        y_train=y_train,
        trend=version_trend(history, ["v0001-abcdef12", "v0002-abcdef12"], "v0003-abcdef12"),
        generated_at="2025-03-01T00:00:00+00:00",
    )
    return render_html(report)


def png_pixels(path: Path) -> tuple[int, int, bytes]:
    """Width, height and the decompressed scanlines of a PNG (filter bytes included)."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG file")
    pos, width, height, chunks = 8, 0, 0, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    return width, height, zlib.decompress(b"".join(chunks))


def is_blank(path: Path) -> bool:
    """True when the image has (almost) one colour: fewer than 8 distinct byte values."""
    _, _, pixels = png_pixels(path)
    return len(set(pixels[:2_000_000])) < 8


def screenshot(html_path: Path, png_path: Path, browser: str, height: int = 4200) -> Path:
    """Ask ``browser`` (headless) for a 1280-pixel-wide screenshot of ``html_path``."""
    command = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--screenshot={png_path}",
        f"--window-size=1280,{height}",
        html_path.resolve().as_uri(),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=180)
    if not png_path.is_file():
        raise RuntimeError(f"{browser} wrote no screenshot to {png_path}")
    return png_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for report.html/png")
    parser.add_argument("--height", type=int, default=4200, help="window height in pixels")
    args = parser.parse_args(argv)
    browser = find_browser()
    if browser is None:
        print("No Chromium found (tried " + ", ".join(BROWSERS) + "); set $CHROMIUM.")
        return 2
    out = args.out or Path(tempfile.mkdtemp(prefix="libre-report-"))
    out.mkdir(parents=True, exist_ok=True)
    html_path = out / "report.html"
    html_path.write_text(sample_report_html(), encoding="utf-8")
    png = screenshot(html_path, out / "report.png", browser, args.height)
    width, height, _ = png_pixels(png)
    if is_blank(png):
        print(f"{png} ({width}x{height}) is blank")
        return 1
    print(f"{png} ({width}x{height}, {png.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
