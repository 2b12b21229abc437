"""Writing a benchmark's own marked section of docs/benchmarks.md (others write other sections)."""

from __future__ import annotations

from pathlib import Path


def replace_marked_section(path: Path, start: str, end: str, section: str) -> None:
    """Replace the text between the ``start`` and ``end`` markers of ``path`` (appended when
    missing), atomically."""
    from libre_lib.ops.files import atomic_write_text  # lazy: keeps worker imports light

    block = f"{start}\n{section.strip()}\n{end}\n"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1].lstrip("\n")
        text = head + block + ("\n" + tail if tail else "")
    else:
        text = text.rstrip("\n") + "\n\n" + block
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
