"""GitHub-flavoured Markdown without HTML: escaped text, code, tables and plain blocks.

Every character Markdown could act on is backslash-escaped, so column names, labels and rule
texts always render as the text they are (no accidental emphasis, link, list or inline HTML).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable, Sequence

__all__ = [
    "INVISIBLE",
    "md_block",
    "md_blocks",
    "md_cells",
    "md_code",
    "md_fence",
    "md_image",
    "md_inline",
    "md_table",
    "one_line",
    "visible",
]

_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~#!])")
_LINE_START = re.compile(r"^(\s*(?:\d+)?)([-+=.)])")


#: Characters a terminal or a renderer acts on instead of showing: C0/C1 controls (ESC starts
#: colours and hidden hyperlinks) except tab, newline and carriage return; the zero-width
#: space, bidirectional overrides and isolates (U+202E reverses the text after it); line and
#: paragraph separators (a new line that does not look like one in the data). Joiners and
#: direction marks stay: Persian and Indic words and emoji need them.
INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b\u202a-\u202e\u2028\u2029\u2066-\u2069\ufeff]"
)


def visible(text) -> str:
    """``text`` with the characters of :data:`INVISIBLE` written as escapes (``\\x1b``,
    ``\\u202e``), so a column name or a value from the data cannot restyle, hide or reorder
    what is printed around it."""
    return INVISIBLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def one_line(text) -> str:
    """``text`` for a table cell or a code span: a line break written as ``\n`` (``\r``), so
    a column named "a<newline>ge" does not read as one named "a ge"."""
    return str(text).replace("\r", "\\r").replace("\n", "\\n")


def md_inline(text) -> str:
    """Inline text with every character Markdown could act on backslash-escaped (and the
    characters :func:`visible` escapes written out)."""
    return " ".join(_SPECIAL.sub(r"\\\1", visible(text)).splitlines())


def md_cells(rows: Iterable[dict]) -> list[dict]:
    """Rows for a table artifact whose text cells are escaped (:func:`md_inline`): the Prefect
    UI renders each cell as Markdown, so a column named ``[x](javascript:...)`` was a link."""
    return [{k: md_inline(v) if isinstance(v, str) else v for k, v in row.items()} for row in rows]


def md_block(text) -> str:
    """Like :func:`md_inline`, also when the text starts a line (no accidental list or heading)."""
    return _LINE_START.sub(r"\1\\\2", md_inline(str(text).strip()))


def md_code(text) -> str:
    """A code span for a table cell (pipes escaped as GFM tables require)."""
    text = visible(one_line(text))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}".replace("|", "\\|")


def md_fence(text: str, info: str = "text") -> str:
    """A fenced code block longer than any backtick run inside ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]):
    """A GFM table of escaped cells; ``numeric`` columns are right-aligned."""
    lines = [
        "| " + " | ".join(md_inline(h) for h in headers) + " |",
        "|" + "|".join("---:" if n else "---" for n in numeric) + "|",
    ]
    lines += ["| " + " | ".join(md_inline(one_line(cell)) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


#: SVG's namespace: a browser draws an SVG given as an image (a ``data:`` URL) only with it;
#: inline in HTML it is implied, so the figures themselves leave it out.
SVG_NAMESPACE = 'xmlns="http://www.w3.org/2000/svg"'


def md_image(svg: str, alt: str) -> str:
    """An inline image of an SVG figure: ``![alt](data:image/svg+xml;base64,...)``, the root
    element given SVG's namespace (the Prefect UI showed broken images without it)."""
    if svg.startswith("<svg ") and "xmlns=" not in svg.split(">", 1)[0]:
        svg = f"<svg {SVG_NAMESPACE} {svg[len('<svg ') :]}"
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return f"![{md_inline(alt)}](data:image/svg+xml;base64,{data})"


def md_blocks(
    blocks: Iterable[tuple[str, object]],
    heading: str,
    paragraph: Callable[[object], str] = md_inline,
    figures: bool = False,
) -> list[str]:
    """The Markdown of plain blocks, one string per block.

    A block is ``("p", text)``, ``("h", heading)``, ``("list", [text, ...])``, ``("dl",
    [(term, text), ...])``, ``("table", (headers, rows, numeric))`` or ``("figure", (svg,
    caption))``; ``heading`` is the marker of headings (``"###"``) and ``paragraph`` escapes
    paragraphs. Figures become inline images with ``figures``, else are left out.
    """
    out = []
    for kind, content in blocks:
        if kind == "p":
            out.append(paragraph(content))
        elif kind == "h":
            out.append(f"{heading} {md_inline(content)}")
        elif kind == "list":
            out.append("\n".join(f"- {md_inline(item)}" for item in content))
        elif kind == "dl":
            out.append("\n".join(f"- **{md_inline(t)}**: {md_inline(d)}" for t, d in content))
        elif kind == "figure":
            if figures:
                svg, caption = content
                out.append(md_image(svg, caption))
        else:
            out.append(md_table(*content))
    return out
