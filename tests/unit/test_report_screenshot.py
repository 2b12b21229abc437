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
