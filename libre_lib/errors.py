"""One small error hierarchy: every problem with the caller's input is a ``LibreError``.

``LibreError`` subclasses ``ValueError`` so code that already catches ``ValueError`` (as
scikit-learn's model selection does) keeps working.
"""

import os
import sys


class LibreError(ValueError):
    """Base class of every error raised by libre_lib for bad input or configuration."""


class ParameterError(LibreError):
    """A constructor or function parameter has an invalid value."""


class DataError(LibreError):
    """The training or prediction data cannot be used as given (empty, infinite, wrong labels)."""


class SchemaError(DataError):
    """The columns seen at predict time differ from the columns seen at fit time."""


class ModelFormatError(LibreError):
    """A serialized model (JSON) is malformed or written by an incompatible version."""


class ArtifactError(LibreError, OSError):
    """A cached artifact cannot be written, found or trusted (missing, truncated, corrupt).

    It is also an ``OSError`` so code that handles file-system failures catches it too.
    """

    def __reduce__(self):
        # explicit, so that it pickles the same everywhere (OSError's reduce with ValueError's
        # init otherwise makes traceback-pickling helpers, as used by Dask, rebuild it wrongly)
        return (type(self), self.args, self.__dict__ or None)


class LibreWarning(UserWarning):
    """The work continues, but something the user should know happened (e.g. a column dropped)."""


#: The package's folder: frames of files under it are not the user's.
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel() -> int:
    """The ``stacklevel`` that attributes a warning issued by the calling function to the
    first frame outside libre_lib: the user's line, however deep the library called it from."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


class SpecError(LibreError):
    """A pipeline spec is missing a key, has an unknown key or an invalid value."""


class DataValidationError(LibreError):
    """The training data failed its declared validation rules (see ``libre_lib.ops.validation``).

    The message lists every failed expectation; ``report`` holds the full ``ValidationReport``
    when the error was raised by ``raise_for_failures``.
    """

    report = None


#: The most characters of a bad value an error message shows.
EXCERPT_CHARS = 80


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` with its thousands separated and ``noun`` in the number it takes: "1 row",
    "1,191 rows" (``plural``: the plural when it is not ``noun`` + "s")."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def apart(value: float, other: float, digits: int = 3) -> tuple[str, str]:
    """Two scores with ``digits`` decimals, or as many more as tell them apart: an
    accuracy of 0.99892 against 0.99942 reads 0.9989 against 0.9994, not 0.999 twice (up to
    9 decimals; equal values with ``digits``)."""
    if value == other:
        return f"{value:.{digits}f}", f"{other:.{digits}f}"
    for places in range(digits, 10):
        first, second = f"{value:.{places}f}", f"{other:.{places}f}"
        if first != second:
            break
    return first, second


def shorten(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` cut to ``limit`` characters ("…" and the full length at the cut)."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}… ({len(text)} characters)"


def excerpt(value, limit: int = EXCERPT_CHARS) -> str:
    """``repr(value)`` cut to ``limit`` characters, so an error message never echoes a whole
    large value."""
    return shorten(repr(value), limit)
