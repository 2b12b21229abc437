"""FindBoundary / FindBoundaryPoint (paper, section 3.1, Algorithms 1-2) on hand-checked bits.

Bit strings are written as in the paper ("11001"); a lattice element ``a`` covers ``s``
(``a <= s``) iff every 1 of ``a`` is also a 1 of ``s``.
"""

import numpy as np
import pytest

from libre_lib.encoding import ZeroSets, inverse_one_hot
from libre_lib.errors import ParameterError
from libre_lib.weak_learner import find_boundary


def bits(*strings: str) -> np.ndarray:
    """Bool matrix from paper-style bit strings: bits("11001", "01101")."""
    return np.array([[c == "1" for c in s] for s in strings], dtype=bool).reshape(len(strings), -1)


def strings(matrix: np.ndarray) -> list[str]:
    return ["".join("1" if b else "0" for b in row) for row in matrix]


def covers(a: np.ndarray, s: np.ndarray) -> bool:
    """a <= s: every 1 of a is a 1 of s."""
    return not (a & ~s).any()


# --- the paper's examples ------------------------------------------------------------------


def test_paper_example_3_2_single_boundary_point():
    # The paper prints D- = {01101, 01101}, but its own walk-through flips the second bit into
    # "10001 <= 10101 in D-": the second negative is 10101 (a typo in the printed set).
    points = find_boundary(bits("11001"), bits("01101", "10101"))
    assert strings(points) == ["11000"]


def test_paper_find_boundary_point_example_first_steps():
    # D+ = {10101, 01101, 01110}, D- = {10110, 11010}, H1, seed 10101 (I = {1, 3, 5}):
    # d(., D-_5^0) = 1 so bit 5 (0-based 4) moves to J; bit 1 has no negative with a 0
    # ("undefined" distance) and the largest |D+_i^0| = 2, so it is flipped first.
    trace: list = []
    find_boundary(
        bits("10101", "01101", "01110"), bits("10110", "11010"), heuristic="H1", trace=trace
    )
    assert trace[0] == ("seed", 0)
    first_seed = trace[1 : trace.index(("seed", 2))]
    keeps = [b for op, b in first_seed if op == "keep"]
    flips = [b for op, b in first_seed if op == "flip"]
    assert 4 in keeps
    assert trace[1] == ("keep", 4)  # moved to J before any flip
    assert flips[0] == 0


def test_paper_find_boundary_point_example_full_result():
    # Continuing the example: after flipping bit 1, bit 3 (distance 2) is flipped, leaving
    # 00001 which covers 10101 and 01101. 01110 is still uncovered and seeds 01100.
    trace: list = []
    points = find_boundary(bits("10101", "01101", "01110"), bits("10110", "11010"), trace=trace)
    assert strings(points) == ["00001", "01100"]
    assert [t for t in trace if t[0] == "seed"] == [("seed", 0), ("seed", 2)]


def test_appendix_cpu_mem_example_bits():
    # Appendix "THE BASE METHOD STEP BY STEP": t1 = 110 01 and t3 = 101 10 are the failures;
    # t2, t5 = 011 01, t4 = 011 10, t6-t8 = 101 01 are the negatives.
    positives = bits("11001", "10110")
    negatives = bits("01101", "01101", "01110", "10101", "10101", "10101")
    points = find_boundary(positives, negatives)
    assert set(strings(points)) == {"11000", "10010"}


def test_appendix_example_through_zero_sets_from_codes():
    # The same example given as bin codes (CPU in 3 bins, MEM in 2) and ZeroSets, the layout
    # the ensemble actually uses.
    n_bins = np.array([3, 2])
    pos_codes = np.array([[2, 0], [1, 1]])
    neg_codes = np.array([[0, 0], [0, 1], [1, 0]])
    assert strings(inverse_one_hot(pos_codes, n_bins)) == ["11001", "10110"]
    points = find_boundary(
        ZeroSets.from_codes(pos_codes, n_bins), ZeroSets.from_codes(neg_codes, n_bins)
    )
    assert set(strings(points)) == {"11000", "10010"}


# --- heuristics and seeding ------------------------------------------------------------------

# D+ = {1111, 1100}, D- = {0100, 1001, 1010}. Seed 1111 (I = {0, 1, 2, 3}, 0-based):
#   distances: d(1111, 0100) = 3, d(1111, 1001) = 2, d(1111, 1010) = 2, so
#   min distance per bit: bit0 -> 3 (only 0100), bit1 -> 2, bit2 -> 2, bit3 -> 2.
#   |D+_i^0| (1100 has zeros at bits 2, 3): bit2 = bit3 = 1, bit0 = bit1 = 0.
# H1 (coverage first) flips bit 2 (|D+| = 1, lowest index): 1001 drops to distance 1 -> bit 1
#   is blocked; then bit 3 (|D+| = 1): 0100 and 1010 drop to 1 -> bit 0 is blocked.
#   Point 1100, which also covers the positive 1100: ONE point.
# H2 (distance first) flips bit 0 (distance 3): then bits 1-3 all have distance 2 and bit 2
#   wins on |S^0|; flipping it blocks bits 1 and 3. Point 0101 does not cover 1100, which seeds
#   a second point 1100: TWO points. H1 favours fewer points, as the paper says.
HEURISTIC_POSITIVES = ("1111", "1100")
HEURISTIC_NEGATIVES = ("0100", "1001", "1010")


def test_h1_and_h2_differ_on_a_hand_built_case():
    pos, neg = bits(*HEURISTIC_POSITIVES), bits(*HEURISTIC_NEGATIVES)
    h1_trace: list = []
    h2_trace: list = []
    h1 = find_boundary(pos, neg, heuristic="H1", trace=h1_trace)
    h2 = find_boundary(pos, neg, heuristic="H2", trace=h2_trace)
    assert strings(h1) == ["1100"]
    assert sorted(strings(h2)) == ["0101", "1100"]
    assert h1_trace[:2] == [("seed", 0), ("flip", 2)]
    assert h2_trace[:2] == [("seed", 0), ("flip", 0)]


def test_seeds_uncovered_vs_all():
    # Same data with 1100 listed first, H2. Seed 1100 gives the point 1100 (bits 0 and 1 are
    # blocked at once), which covers 1111: with seeds="uncovered" (Algorithm 1) 1111 never
    # seeds. With seeds="all" (the authors' code) 1111 seeds too and H2 reaches 0101, which
    # neither covers nor is covered by 1100, so both are kept.
    pos, neg = bits("1100", "1111"), bits(*HEURISTIC_NEGATIVES)
    uncovered_trace: list = []
    uncovered = find_boundary(pos, neg, heuristic="H2", seeds="uncovered", trace=uncovered_trace)
    every = find_boundary(pos, neg, heuristic="H2", seeds="all")
    assert strings(uncovered) == ["1100"]
    assert [t for t in uncovered_trace if t[0] == "seed"] == [("seed", 0)]
    assert sorted(strings(every)) == ["0101", "1100"]


def test_heavier_seed_goes_first():
    # Seeds are visited by decreasing multiplicity, then input order.
    trace: list = []
    find_boundary(
        bits("1100", "1111"), bits(*HEURISTIC_NEGATIVES), positive_weight=[1, 3], trace=trace
    )
    assert trace[0] == ("seed", 1)


def test_seeds_all_keeps_the_set_irredundant():
    # Every point found from a seed either is dropped (covered by an existing point) or evicts
    # the existing points it covers: no point of the result covers another one.
    rng = np.random.RandomState(7)
    pos = rng.rand(25, 10) < 0.5
    neg = rng.rand(40, 10) < 0.5
    for heuristic in ("H1", "H2"):
        for seeds in ("uncovered", "all"):
            points = find_boundary(pos, neg, heuristic=heuristic, seeds=seeds)
            assert len(points) > 1
            for i, a in enumerate(points):
                for j, b in enumerate(points):
                    if i != j:
                        assert (a & ~b).any(), (heuristic, seeds, strings([a, b]))


def test_no_negatives_gives_no_point():
    # Every bit can be flipped: the result would be the always-true element, which is no rule.
    assert find_boundary(bits("101", "011"), np.zeros((0, 3), dtype=bool)).shape == (0, 3)


def test_bit_count_mismatch_is_refused():
    with pytest.raises(ValueError, match="5 bits but negatives have 4"):
        find_boundary(bits("11001"), bits("0110"))


@pytest.mark.parametrize("heuristic", ["H3", "h1", "", None])
def test_invalid_heuristic(heuristic):
    with pytest.raises(ParameterError, match="'heuristic' parameter must be one of"):
        find_boundary(bits("11001"), bits("01101"), heuristic=heuristic)


@pytest.mark.parametrize("seeds", ["some", "ALL", None])
def test_invalid_seeds(seeds):
    with pytest.raises(ParameterError, match="'seeds' parameter must be one of"):
        find_boundary(bits("11001"), bits("01101"), seeds=seeds)


# --- regression: distances updated from the wrong negatives ----------------------------------


def test_regression_points_never_cover_a_training_negative():
    # The authors' published code, after flipping bit i, updated the per-bit distances from
    # the wrong set of negatives (not the ones with a 0 at i). Distances went stale, a bit that
    # should have been blocked was flipped, and the resulting "boundary points" covered training
    # negatives. Here: a random case with contradictions removed (no negative is covered by a
    # positive, so a clean boundary exists); no point may cover a negative, and every point
    # must be a true boundary point: flipping any of its remaining 1s creates a conflict.
    rng = np.random.RandomState(20200826)
    pos = rng.rand(40, 14) < 0.6
    neg = rng.rand(120, 14) < 0.6
    neg = neg[[not any(covers(p, n) for p in pos) for n in neg]]
    assert len(neg) > 50
    for heuristic in ("H1", "H2"):
        for seeds in ("uncovered", "all"):
            points = find_boundary(pos, neg, heuristic=heuristic, seeds=seeds)
            assert len(points)
            for a in points:
                assert not any(covers(a, n) for n in neg)
                assert any(covers(a, p) for p in pos)
                for i in np.flatnonzero(a):
                    flipped = a.copy()
                    flipped[i] = False
                    assert any(covers(flipped, n) for n in neg), (strings([a]), i)


def test_every_positive_is_covered_with_uncovered_seeding():
    # Algorithm 1 loops until S is empty: without contradictions every positive is covered.
    rng = np.random.RandomState(3)
    pos = rng.rand(30, 12) < 0.6
    neg = rng.rand(60, 12) < 0.6
    neg = neg[[not any(covers(p, n) for p in pos) for n in neg]]
    points = find_boundary(pos, neg)
    assert all(any(covers(a, p) for a in points) for p in pos)
