"""Producing the final boundary (paper, section 3.3): local-support filter and set cover."""

import numpy as np
import pytest

from libre_lib.encoding import ZeroSets, distinct_records
from libre_lib.ensemble import Candidates, covered_counts
from libre_lib.selection import (
    candidates_problem,
    collapse_patterns,
    cover_candidates,
    cover_problem,
    coverage,
    filter_candidates,
    greedy_cover,
    packed_coverage,
    rank_candidates,
    select_rules,
    weighted_set_cover,
)

# --- coverage --------------------------------------------------------------------------------


def test_coverage_of_codes():
    n_bins = np.array([3, 2])
    points = np.array([[1, 1, 0, 0, 0], [1, 0, 0, 1, 0], [0, 0, 0, 0, 0]], dtype=bool)
    codes = np.array([[2, 0], [1, 1], [0, 0], [-1, 1], [2, -1]])
    expected = [
        [True, False, False, False, True],  # CPU in bin 3; -1 in MEM is fine (MEM is free)
        [False, True, False, False, False],  # CPU in bins 2-3 and MEM in bin 2
        [True, True, True, True, True],  # the always-true element
    ]
    assert coverage(points, codes, n_bins).tolist() == expected


# --- rank_candidates -------------------------------------------------------------------------


def test_rank_candidates_filter_and_order():
    # 10 positives, 20 negatives.
    #            lsup+  lsup-  exclusiveness
    # 0: 5, 2    0.5    0.1    0.833
    # 1: 2, 8    0.2    0.4    filtered (lsup+ < lsup-)
    # 2: 5, 10   0.5    0.5    filtered (lsup+ = lsup-, not strictly greater)
    # 3: 1, 0    0.1    0.0    1.0
    # 4: 5, 2    as 0 but more general
    # 5: 4, 0    0.4    0.0    1.0, more local support than 3
    # 6: 5, 2    as 0, same generality: index decides
    # 7: 0, 0    filtered (covers no positive)
    pos = np.array([5, 2, 5, 1, 5, 4, 5, 0], dtype=float)
    neg = np.array([2, 8, 10, 0, 2, 0, 2, 0], dtype=float)
    generality = np.array([3, 3, 3, 3, 4, 3, 3, 9])
    ranked = rank_candidates(pos, neg, generality, 10, 20, top_k=None, min_local_support=0.0)
    assert ranked.tolist() == [5, 3, 4, 0, 6]
    top = rank_candidates(pos, neg, generality, 10, 20, top_k=2, min_local_support=0.0)
    assert top.tolist() == [5, 3]
    # min_local_support is inclusive: 0.4 keeps candidate 5 (lsup+ = 0.4), drops 3 (0.1)
    supported = rank_candidates(pos, neg, generality, 10, 20, top_k=None, min_local_support=0.4)
    assert supported.tolist() == [5, 4, 0, 6]


def test_rank_candidates_nothing_passes():
    pos = np.array([1.0, 0.0])
    neg = np.array([5.0, 1.0])
    ranked = rank_candidates(pos, neg, np.array([1, 1]), 10, 10, None, 0.0)
    assert ranked.tolist() == []


# --- weighted_set_cover ----------------------------------------------------------------------

# Records: p0 p1 p2 p3 (positives) n0 n1 (negatives), unit weights.
POS_W = np.array([1, 1, 1, 1, 0, 0], dtype=float)
NEG_W = np.array([0, 0, 0, 0, 1, 1], dtype=float)


def cover_of(*rows: str) -> np.ndarray:
    return np.array([[c == "1" for c in r] for r in rows], dtype=bool)


def test_alpha_trades_positives_against_negatives():
    cover = cover_of(
        "111011",  # A: 3 positives, 2 negatives
        "110000",  # B: 2 positives, 0 negatives
    )
    generality = np.array([1, 1])
    # alpha 0.7: A = 2.1 - 0.6 = 1.5 beats B = 1.4
    chosen, gains = weighted_set_cover(cover, POS_W, NEG_W, generality, alpha=0.7)
    assert chosen[0] == 0
    assert gains[0] == (3.0, 2.0)
    # alpha 0.5: A = 1.5 - 1.0 = 0.5 loses to B = 1.0; A then adds p2 against n0, n1: 0.5 - 1 < 0
    chosen, gains = weighted_set_cover(cover, POS_W, NEG_W, generality, alpha=0.5)
    assert chosen == [1]
    assert gains == [(2.0, 0.0)]


def test_ties_go_to_the_more_general_candidate_then_the_lower_index():
    cover = cover_of("110000", "110000", "110000")
    chosen, _ = weighted_set_cover(cover, POS_W, NEG_W, np.array([2, 5, 5]), alpha=0.7)
    assert chosen == [1]
    chosen, _ = weighted_set_cover(cover, POS_W, NEG_W, np.array([5, 5, 5]), alpha=0.7)
    assert chosen == [0]


def test_equal_gains_in_exact_arithmetic_are_ties():
    # 5 positives then 7 negatives. A covers p0; B covers p1-p4 and all 7 negatives and is
    # more general. At alpha = 0.7 both gain exactly 7/10: B must come first.
    pos_w = np.array([1.0] * 5 + [0.0] * 7)
    neg_w = 1.0 - pos_w
    a = np.arange(12) == 0
    b = np.arange(12) >= 1
    chosen, _ = weighted_set_cover(np.array([a, b]), pos_w, neg_w, np.array([2, 5]), alpha=0.7)
    assert chosen[0] == 1


def test_stops_when_no_candidate_has_a_positive_gain():
    cover = cover_of(
        "100011",  # A: 1 positive, 2 negatives
        "000100",  # B: 1 positive
    )
    # alpha 0.7: B = 0.7 first, then A = 0.7 - 0.6 = 0.1 > 0 is still worth taking
    chosen, gains = weighted_set_cover(cover, POS_W, NEG_W, np.ones(2), alpha=0.7)
    assert chosen == [1, 0]
    assert gains == [(1.0, 0.0), (1.0, 2.0)]
    # alpha 0.5: A = 0.5 - 1.0 < 0, so the cover stops after B although p0 is uncovered
    chosen, gains = weighted_set_cover(cover, POS_W, NEG_W, np.ones(2), alpha=0.5)
    assert chosen == [1]


def test_zero_gain_is_not_taken():
    cover = cover_of("100010")  # 1 positive, 1 negative: 0.5 * 1 - 0.5 * 1 = 0
    chosen, gains = weighted_set_cover(cover, POS_W, NEG_W, np.ones(1), alpha=0.5)
    assert chosen == []
    assert gains == []


def test_stops_when_every_positive_is_covered():
    cover = cover_of("111100", "100000")
    chosen, gains = weighted_set_cover(cover, POS_W, NEG_W, np.ones(2), alpha=0.7)
    assert chosen == [0]
    assert gains == [(4.0, 0.0)]


def test_max_rules_caps_the_number_of_rules():
    cover = cover_of("100000", "010000", "001000", "000100")
    chosen, _ = weighted_set_cover(cover, POS_W, NEG_W, np.ones(4), alpha=0.7, max_rules=2)
    assert chosen == [0, 1]


def test_gains_count_only_records_not_yet_covered():
    cover = cover_of(
        "111010",  # 3 positives, 1 negative: 2.1 - 0.3 = 1.8
        "001101",  # 2 positives, 1 negative: 1.4 - 0.3; after the first, p2 is gone: p3, n1
        "101010",  # entirely inside the first: 0 new records
    )
    chosen, gains = weighted_set_cover(cover, POS_W, NEG_W, np.ones(3), alpha=0.7)
    assert chosen == [0, 1]
    assert gains == [(3.0, 1.0), (1.0, 1.0)]


def test_weights_are_multiplicities():
    # distinct records with weights: candidate 1 covers one heavy positive.
    cover = cover_of("1100", "0010")
    pos_w = np.array([1.0, 1.0, 5.0, 0.0])
    neg_w = np.array([0.0, 0.0, 0.0, 3.0])
    chosen, gains = weighted_set_cover(cover, pos_w, neg_w, np.ones(2), alpha=0.7)
    assert chosen == [1, 0]
    assert gains == [(5.0, 0.0), (2.0, 0.0)]


def test_cover_of_nothing():
    chosen, gains = weighted_set_cover(
        np.zeros((2, 6), dtype=bool), POS_W, NEG_W, np.ones(2), alpha=0.7
    )
    assert (chosen, gains) == ([], [])


# --- select_rules ----------------------------------------------------------------------------

# Two features of 2 bins. Distinct records (codes -> pos/neg weights):
#   (0, 0): 3 pos, (0, 1): 1 pos 1 neg, (1, 0): 4 neg, (1, 1): 1 pos
N_BINS = np.array([2, 2])
RECORDS = distinct_records(
    np.array([[0, 0], [0, 1], [1, 0], [1, 1]]),
    N_BINS,
    np.array([3.0, 1.0, 0.0, 1.0]),
    np.array([0.0, 1.0, 4.0, 0.0]),
)
POINTS = np.array(
    [
        [0, 1, 0, 0],  # f0 = 0: 4 pos 1 neg
        [0, 0, 1, 0],  # f1 = 1: 2 pos 1 neg
        [1, 0, 1, 0],  # f0 = 1 and f1 = 1: 1 pos
        [0, 0, 0, 0],  # always true: 5 pos 5 neg -> filtered (lsup+ = lsup-)
    ],
    dtype=bool,
)


def candidates_of(points: np.ndarray) -> Candidates:
    pos, neg = covered_counts(
        points,
        ZeroSets.from_codes(RECORDS.codes, N_BINS),
        RECORDS.positive_weight,
        RECORDS.negative_weight,
    )
    return Candidates(points, pos, neg)


def test_covered_counts_agree_with_coverage():
    candidates = candidates_of(POINTS)
    assert candidates.positives.tolist() == [4.0, 2.0, 1.0, 5.0]
    assert candidates.negatives.tolist() == [1.0, 1.0, 0.0, 5.0]
    cover = coverage(POINTS, RECORDS.codes, N_BINS)
    assert (cover @ RECORDS.positive_weight).tolist() == candidates.positives.tolist()
    assert (cover @ RECORDS.negative_weight).tolist() == candidates.negatives.tolist()


def test_select_rules_statistics():
    selection = select_rules(candidates_of(POINTS), RECORDS, N_BINS, alpha=0.7)
    assert selection.n_candidates == 4
    assert selection.n_filtered == 3
    # after f0 = 0, only (1, 1) is left to gain: candidates 1 and 2 both add 1 positive and
    # candidate 1 is more general (3 zeros against 2)
    assert selection.indices.tolist() == [0, 1]
    first, second = selection.stats
    assert (first.positives, first.negatives, first.new_positives, first.new_negatives) == (
        4.0, 1.0, 4.0, 1.0,
    )  # fmt: skip
    assert first.precision == 0.8
    # totals on the whole training set, but only the marginal gain as "new"
    assert (second.positives, second.negatives, second.new_positives, second.new_negatives) == (
        2.0, 1.0, 1.0, 0.0,
    )  # fmt: skip
    assert second.precision == 2 / 3


def test_filter_then_cover_stages():
    candidates = candidates_of(POINTS)
    # exclusiveness: 2 -> 0.2/(0.2+0) = 1, 0 -> 0.8/(0.8+0.2), 1 -> 0.4/(0.4+0.2); 3 is out
    ranked = filter_candidates(candidates, RECORDS, top_k=None)
    assert ranked.tolist() == [2, 0, 1]
    assert filter_candidates(candidates, RECORDS, top_k=2).tolist() == [2, 0]
    # min_local_support = 0.4 keeps 0 (lsup+ 0.8) and 1 (0.4), not 2 (0.2)
    assert filter_candidates(candidates, RECORDS, top_k=None, min_local_support=0.4).tolist() == [
        0, 1,
    ]  # fmt: skip
    covered = cover_candidates(candidates.take(ranked), RECORDS, N_BINS, alpha=0.7)
    assert covered.indices.tolist() == [1, 2]  # positions in the ranked list: 0 then 1
    assert ranked[covered.indices].tolist() == [0, 1]


def test_max_rules_in_select_rules():
    selection = select_rules(candidates_of(POINTS), RECORDS, N_BINS, alpha=0.7, max_rules=1)
    assert selection.indices.tolist() == [0]


def test_select_rules_without_candidates():
    empty = select_rules(Candidates.empty(4), RECORDS, N_BINS)
    assert empty.indices.tolist() == []
    assert (empty.n_candidates, empty.n_filtered) == (0, 0)
    only_negatives = candidates_of(np.array([[0, 1, 1, 0], [0, 0, 0, 0]], dtype=bool))
    bad = select_rules(only_negatives, RECORDS, N_BINS)  # (1, 0) only, and the trivial rule
    assert bad.indices.tolist() == []
    assert (bad.n_candidates, bad.n_filtered) == (2, 0)


# --- the collapsed, incremental greedy against a plain one ------------------------------------


def plain_greedy(cover, pos_w, neg_w, generality, alpha, max_rules=None):
    """The greedy cover as the paper states it, on every record, gains recomputed each step."""
    pos_w, neg_w = pos_w.astype(float).copy(), neg_w.astype(float).copy()
    chosen, gains = [], []
    while (max_rules is None or len(chosen) < max_rules) and pos_w.sum() > 0:
        best, best_key = None, None
        for i in range(cover.shape[0]):
            if i in chosen:
                continue
            p, n = float(cover[i] @ pos_w), float(cover[i] @ neg_w)
            key = (round(alpha * p - (1 - alpha) * n, 9), generality[i], -i)
            if best_key is None or key > best_key:
                best, best_key, best_pn = i, key, (p, n)
        if best is None or not best_key[0] > 0:
            break
        chosen.append(best)
        gains.append(best_pn)
        pos_w[cover[best]] = 0
        neg_w[cover[best]] = 0
    return chosen, gains


def test_greedy_cover_matches_the_plain_greedy():
    rng = np.random.default_rng(7)
    for trial in range(60):
        n_cand, n_rec = rng.integers(1, 70), rng.integers(1, 120)
        cover = rng.random((n_cand, n_rec)) < rng.uniform(0.05, 0.6)
        # few distinct columns, so that records collapse into shared patterns
        if trial % 2:
            cover = cover[:, rng.integers(0, max(1, n_rec // 8), n_rec) % n_rec]
        pos_w = rng.integers(0, 4, n_rec).astype(float)
        neg_w = rng.integers(0, 4, n_rec).astype(float)
        generality = rng.integers(0, 3, n_cand)
        alpha = float(rng.choice([0.5, 0.7, 0.9]))
        cap = None if trial % 3 else int(rng.integers(1, 5))
        got = weighted_set_cover(cover, pos_w, neg_w, generality, alpha, cap)
        assert got == plain_greedy(cover, pos_w, neg_w, generality, alpha, cap), trial


def test_collapse_patterns_is_exact():
    rng = np.random.default_rng(3)
    for n_cand in (1, 7, 64, 65, 130):  # one word, a partial word, exactly one, more
        cover = rng.random((n_cand, 300)) < 0.5
        cover = cover[:, rng.integers(0, 40, 300)]  # 40 distinct columns at most
        patterns, inverse = collapse_patterns(cover)
        assert (patterns[:, inverse] == cover).all()
        assert len({c.tobytes() for c in patterns.T}) == patterns.shape[1]  # distinct
    empty, inverse = collapse_patterns(np.zeros((3, 0), dtype=bool))
    assert empty.shape == (3, 0) and inverse.size == 0


def test_cover_candidates_reuses_a_problem():
    candidates = candidates_of(POINTS)
    ranked = filter_candidates(candidates, RECORDS, top_k=None)
    kept = candidates.take(ranked)
    problem = candidates_problem(kept, RECORDS, N_BINS)
    for alpha in (0.5, 0.7, 0.9):
        for cap in (None, 1):
            shared = cover_candidates(kept, RECORDS, N_BINS, alpha, cap, problem=problem)
            alone = cover_candidates(kept, RECORDS, N_BINS, alpha, cap)
            assert shared.indices.tolist() == alone.indices.tolist()
            assert shared.stats == alone.stats
    with pytest.raises(ValueError, match="other candidates"):
        cover_candidates(candidates, RECORDS, N_BINS, problem=problem)


def test_packed_coverage_is_coverage():
    rng = np.random.default_rng(5)
    n_bins = np.array([3, 1, 4, 2])
    for n_points in (0, 1, 5, 64, 70, 129):
        points = rng.random((n_points, int(n_bins.sum()))) < 0.3
        points[: n_points // 3, 3:8] = False  # some points leave features free
        codes = np.stack([rng.integers(-1, b, 200) for b in n_bins], axis=1)
        words = packed_coverage(points, codes, n_bins)
        bits = np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")
        assert not bits[:, n_points:].any()  # no bit past the last point
        assert (bits[:, :n_points].T.astype(bool) == coverage(points, codes, n_bins)).all()


def test_cover_problem_stays_packed():
    """A cover problem holds one bit per (pattern, candidate). It used to hold a dense float64
    (candidates x patterns) matrix: 0.8 GB per problem on magic's 8,600 candidates x 11,800
    patterns, and the search kept hundreds of them. Same patterns and weights as before."""
    rng = np.random.default_rng(11)
    for n_cand in (1, 63, 64, 65, 200):
        cover = rng.random((n_cand, 500)) < 0.3
        cover = cover[:, rng.integers(0, 120, 500)]  # shared patterns
        cover[:, :7] = False  # records no candidate covers are dropped
        pos_w = rng.integers(0, 3, 500).astype(float)
        neg_w = rng.integers(0, 3, 500).astype(float)
        problem = cover_problem(cover, pos_w, neg_w, np.zeros(n_cand, dtype=int))
        assert problem.patterns.dtype == np.uint64
        assert problem.patterns.shape[1] == -(-n_cand // 64)
        assert problem.n_candidates == n_cand
        patterns, inverse = collapse_patterns(cover)
        covered = patterns.any(axis=0)
        expected = {
            column.tobytes(): (pos_w[inverse == j].sum(), neg_w[inverse == j].sum())
            for j, column in enumerate(patterns.T)
            if covered[j]
        }
        got = {
            column.tobytes(): (p, n)
            for column, p, n in zip(
                problem.coverage().T, problem.positive_weight, problem.negative_weight, strict=True
            )
        }
        assert got == expected


def test_greedy_cover_on_many_candidates_matches_the_plain_greedy():
    """Several 64-candidate words per pattern, and many exact ties (small integer weights,
    few generality levels) decided by generality, then candidate order."""
    rng = np.random.default_rng(13)
    for trial in range(12):
        n_cand, n_rec = int(rng.integers(65, 300)), int(rng.integers(50, 200))
        cover = rng.random((n_cand, n_rec)) < rng.uniform(0.02, 0.3)
        pos_w = rng.integers(0, 2, n_rec).astype(float)
        neg_w = rng.integers(0, 2, n_rec).astype(float)
        generality = rng.integers(0, 2, n_cand)
        alpha = float(rng.choice([0.5, 0.7, 0.9]))
        problem = cover_problem(cover, pos_w, neg_w, generality)
        got = greedy_cover(problem, alpha)
        assert got == plain_greedy(cover, pos_w, neg_w, generality, alpha), trial


# --- alpha="f1": the rule set's training F1 as the gain ------------------------------------


def _f1(tp, fp, n_positive):
    return 2 * tp / (tp + fp + n_positive)


@pytest.mark.parametrize("seed", range(6))
def test_f1_gain_takes_rules_only_while_they_raise_training_f1(seed):
    rng = np.random.default_rng(seed)
    n_records, n_candidates = 60, 12
    cover = rng.random((n_candidates, n_records)) < rng.uniform(0.05, 0.5, (n_candidates, 1))
    pos_w = rng.integers(0, 3, n_records).astype(float)
    neg_w = rng.integers(0, 6, n_records).astype(float)  # negatives the majority
    generality = rng.integers(1, 5, n_candidates)
    chosen, gains = weighted_set_cover(cover, pos_w, neg_w, generality, alpha="f1")
    n_pos = pos_w.sum()
    tp = fp = 0.0
    covered = np.zeros(n_records, bool)
    for c, (new_pos, new_neg) in zip(chosen, gains, strict=True):
        fresh = cover[c] & ~covered
        assert (new_pos, new_neg) == (pos_w[fresh].sum(), neg_w[fresh].sum())
        before = _f1(tp, fp, n_pos)
        tp, fp = tp + new_pos, fp + new_neg
        assert _f1(tp, fp, n_pos) > before  # every rule raises the F1
        assert tp >= fp  # never less accurate than answering the (negative) majority
        covered |= cover[c]
    # and it stops where no other candidate would raise it within the guard
    for c in set(range(n_candidates)) - set(chosen):
        fresh = cover[c] & ~covered
        more_tp, more_fp = tp + pos_w[fresh].sum(), fp + neg_w[fresh].sum()
        assert more_tp < more_fp or _f1(more_tp, more_fp, n_pos) <= _f1(tp, fp, n_pos) + 1e-12


def test_f1_gain_picks_by_f1_where_alpha_picks_by_precision():
    # a precise rule (4 positives, 0 negatives) and a broad one (10 positives, 4 negatives)
    cover = np.array([[1] * 4 + [0] * 16, [0] * 4 + [1] * 14 + [0] * 2], dtype=bool)
    pos_w = np.array([1.0] * 14 + [0.0] * 4 + [1.0] * 2)
    neg_w = np.array([0.0] * 14 + [1.0] * 4 + [0.0] * 2)
    neg_w = neg_w + np.r_[np.zeros(18), [10.0, 10.0]]  # negatives are the majority
    generality = np.ones(2)
    assert weighted_set_cover(cover, pos_w, neg_w, generality, alpha=0.9)[0][0] == 1
    assert weighted_set_cover(cover, pos_w, neg_w, generality, alpha=0.2)[0] == [0]
    chosen, _ = weighted_set_cover(cover, pos_w, neg_w, generality, alpha="f1")
    assert chosen[0] == 1  # F1 2*10/(14+16) = .67 beats 2*4/(4+16) = .4


def test_f1_gain_needs_the_totals():
    problem = cover_problem(np.ones((1, 2), bool), np.ones(2), np.zeros(2), np.ones(1))
    with pytest.raises(ValueError, match="totals"):
        greedy_cover(problem, "f1")
