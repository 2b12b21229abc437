"""Producing the final boundary (paper, section 3.3) and refining it.

``cover`` holds the local-support filter, top-K and the greedy weighted set cover (with the
majority guard's prefix); ``refinement`` the boundary refinement of the selected rules (not in
the paper). Callers use the names re-exported here.
"""

from .cover import (
    F1_GAIN,
    CoverProblem,
    FilteredCandidates,
    Selection,
    candidates_problem,
    collapse_patterns,
    cover_candidates,
    cover_filtered,
    cover_problem,
    coverage,
    filter_candidates,
    filter_for_cover,
    greedy_cover,
    majority_prefix,
    packed_coverage,
    rank_candidates,
    select_rules,
    weighted_set_cover,
)
from .refinement import OBJECTIVES, refine_rules, rule_stats

__all__ = [
    "F1_GAIN",
    "OBJECTIVES",
    "CoverProblem",
    "FilteredCandidates",
    "Selection",
    "candidates_problem",
    "collapse_patterns",
    "cover_candidates",
    "cover_filtered",
    "cover_problem",
    "coverage",
    "filter_candidates",
    "filter_for_cover",
    "greedy_cover",
    "majority_prefix",
    "packed_coverage",
    "rank_candidates",
    "refine_rules",
    "rule_stats",
    "select_rules",
    "weighted_set_cover",
]
