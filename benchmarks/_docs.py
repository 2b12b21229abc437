"""Writing docs/benchmarks.md: a benchmark's own marked section (others write other sections),
and grid axes as the doc writes them."""

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


def axis_values(values) -> str:
    """A grid axis as the doc writes it: {1, 2, None}."""
    return "{" + ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values) + "}"
