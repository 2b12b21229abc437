"""The weak learner FindBoundary (paper, section 3.1, Algorithms 1-2) and its backends.

``boundary`` holds the algorithm, its numpy reference and the generic compiled kernel; ``cells``
the compiled kernel for grids whose cells fit an int64 key. Both give the same points (tests
compare them); callers use the functions re-exported here.
"""

from ..params import HEURISTICS, SEEDING
from .boundary import (
    check_heuristic,
    check_seeds,
    find_boundary,
    find_boundary_point,
    find_boundary_with_coverage,
)

__all__ = [
    "HEURISTICS",
    "SEEDING",
    "check_heuristic",
    "check_seeds",
    "find_boundary",
    "find_boundary_point",
    "find_boundary_with_coverage",
]
