"""Markdown helpers: escaped text, code, tables and plain blocks."""

from libre_lib.ops.markdown import md_block, md_blocks, md_code, md_fence, md_inline, md_table


def test_inline_text_is_escaped_and_kept_on_one_line():
    assert md_inline("a_b *c* <d>\n[e]|f") == r"a\_b \*c\* \<d\> \[e\]\|f"


def test_block_text_cannot_start_a_list_or_heading():
    assert md_block("  1. first") == r"1\. first"
    assert md_block("- item") == r"\- item"
    assert md_block("# title") == r"\# title"


def test_code_spans_and_fences_outlast_the_backticks_inside():
    assert md_code("a|b") == r"`a\|b`"
    assert md_code("`x`") == "`` `x` ``"
    assert md_fence("a ```b```") == "````text\na ```b```\n````"


def test_table_right_aligns_numeric_columns():
    table = md_table(("Rule", "Rows"), [("x_1", "3")], (False, True))
    assert table == "| Rule | Rows |\n|---|---:|\n| x\\_1 | 3 |"


def test_blocks():
    blocks = [
        ("p", "1. fine"),
        ("h", "Rules *added*"),
        ("list", ["a", "b"]),
        ("table", (("A",), [("1",)], (True,))),
    ]
    assert md_blocks(blocks, heading="###") == [
        "1. fine",
        r"### Rules \*added\*",
        "- a\n- b",
        "| A |\n|---:|\n| 1 |",
    ]
    assert md_blocks(blocks[:1], heading="#", paragraph=md_block) == [r"1\. fine"]


def test_invisible_characters_from_the_data_are_written_out():
    """A column named with an ESC hyperlink sequence reached report.md (and the terminal of
    `libre report`) as a hidden link; a right-to-left override reversed the text after it."""
    from libre_lib.ops.markdown import md_code, md_inline, visible

    name = "year\x1b]8;;https://evil.example\x1b\\CLICK\x1b]8;;\x1b\\"
    assert "\x1b" not in md_inline(name) and "\\\\x1b" in md_inline(name)
    assert visible("col\u202eevil\u200b\u2028x") == "col\\u202eevil\\u200b\\u2028x"
    assert visible("tab\tand\nline ≥ é") == "tab\tand\nline ≥ é"  # shown as they are
    # joiners and direction marks spell Persian and Indic words and emoji
    assert visible("می\u200cخواهد 👩\u200d💻 \u200f") == "می\u200cخواهد 👩\u200d💻 \u200f"
    assert "\x1b" not in md_code("a\x1b[31mb")


def test_a_line_break_in_a_table_cell_or_code_span_is_written_out():
    """A column named "a<newline>ge" read "a ge" in the report's tables, as a column named
    "a ge" does."""
    from libre_lib.ops.report import _html_table

    table = md_table(["column"], [["a\nge"], ["a ge"]], [False])
    assert "| a\\\\nge |" in table and "| a ge |" in table
    assert md_code("a\r\nge") == "`a\\r\\nge`"
    html = _html_table(["column"], [["a\nge"]], [False])
    assert "a\\nge" in html
