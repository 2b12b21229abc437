"""The ensemble (paper, section 3.2): random feature subsets, learners, union of their points."""

import numpy as np
import pytest

from libre_lib import LibreClassifier
from libre_lib.datasets import load_dataset
from libre_lib.encoding import ZeroSets, distinct_records, offsets
from libre_lib.ensemble import (
    Candidates,
    contiguous_candidates,
    covered_counts,
    draw_feature_subsets,
    first_occurrences,
    fit_ensemble,
    learn_subset,
    subset_bits,
    union_candidates,
)
from libre_lib.inputs import binary_target
from libre_lib.selection import coverage


def test_subset_sizes_cycle_down_from_max_features_without_repeats():
    rng = np.random.RandomState(0)
    subsets = draw_feature_subsets(list(range(10)), 8, 3, rng)
    assert [len(s) for s in subsets] == [3, 2, 1, 3, 2, 1, 3, 2]
    assert all(list(s) == sorted(s) for s in subsets)
    assert all(set(s) <= set(range(10)) for s in subsets)


def test_subsets_are_drawn_from_the_pool_and_repeats_are_skipped():
    subsets = draw_feature_subsets([4, 7], 10, 5, np.random.RandomState(1))
    # sizes 2, 1, 2, 1, ...: only (4, 7), (4,) and (7,) exist
    assert sorted(subsets) == [(4,), (4, 7), (7,)]
    assert len(set(subsets)) == len(subsets)


def test_subsets_depend_only_on_the_seed():
    a = draw_feature_subsets(list(range(12)), 20, 5, np.random.RandomState(42))
    b = draw_feature_subsets(list(range(12)), 20, 5, np.random.RandomState(42))
    assert a == b


def test_subset_bits():
    n_bins = np.array([3, 2, 4])
    assert subset_bits(n_bins, [0, 2]).tolist() == [0, 1, 2, 5, 6, 7, 8]
    assert subset_bits(n_bins, [1]).tolist() == [3, 4]


def random_records(seed=0, n=300, n_bins=(3, 2, 4, 2)):
    rng = np.random.RandomState(seed)
    n_bins = np.array(n_bins)
    codes = np.column_stack([rng.randint(0, b, n) for b in n_bins])
    positive = (codes[:, 0] == 2) | ((codes[:, 2] >= 2) & (rng.rand(n) < 0.7))
    return distinct_records(codes, n_bins, positive * 1.0, (~positive) * 1.0), n_bins


def test_learner_points_leave_unseen_features_free_and_count_like_the_full_space():
    records, n_bins = random_records()
    candidates = learn_subset(records, n_bins, [0, 2])
    assert len(candidates) >= 1
    assert not candidates.points[:, subset_bits(n_bins, [1, 3])].any()
    # coverage counted on the learner's projected records equals coverage in the full space
    cover = coverage(candidates.points, records.codes, n_bins)
    np.testing.assert_allclose(candidates.positives, cover @ records.positive_weight)
    np.testing.assert_allclose(candidates.negatives, cover @ records.negative_weight)


def test_covered_counts_with_weights():
    n_bins = np.array([2, 2])
    records = ZeroSets.from_codes(np.array([[0, 0], [0, 1], [1, 1]]), n_bins)
    points = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [1, 1, 0, 0]], dtype=bool)
    pos, neg = covered_counts(points, records, np.array([2.0, 1.0, 0.0]), np.array([0, 0, 5.0]))
    assert pos.tolist() == [3.0, 1.0, 0.0]
    assert neg.tolist() == [0.0, 5.0, 0.0]


@pytest.mark.parametrize("width", [0, 1, 3, 200])
def test_first_occurrences_match_the_column_by_column_definition(width):
    rng = np.random.default_rng(width)
    rows = rng.integers(0, 3, size=(500, width)).astype(np.uint8)  # many duplicate rows
    rows[250:300] = rows[:50]
    if width:
        _, first = np.unique(rows, axis=0, return_index=True)
        expected = np.sort(first).tolist()
    else:
        expected = [0]
    assert first_occurrences(rows).tolist() == expected
    assert first_occurrences(rows[:0]).tolist() == []


def test_union_keeps_first_appearance_and_drops_duplicates():
    a = Candidates(np.array([[1, 0], [0, 1]], dtype=bool), np.array([1.0, 2.0]), np.zeros(2))
    b = Candidates(np.array([[1, 1], [1, 0]], dtype=bool), np.array([3.0, 1.0]), np.zeros(2))
    union = union_candidates([a, Candidates.empty(2), b], 2)
    assert union.points.astype(int).tolist() == [[1, 0], [0, 1], [1, 1]]
    assert union.positives.tolist() == [1.0, 2.0, 3.0]
    assert len(union_candidates([], 2)) == 0


def test_fit_ensemble_threads_give_the_same_union():
    records, n_bins = random_records(seed=3)
    subsets = draw_feature_subsets(range(4), 12, 3, np.random.RandomState(0))
    serial = fit_ensemble(records, n_bins, subsets)
    threaded = fit_ensemble(records, n_bins, subsets, n_jobs=2)
    np.testing.assert_array_equal(serial.points, threaded.points)
    np.testing.assert_array_equal(serial.positives, threaded.positives)
    assert len(np.unique(serial.points, axis=0)) == len(serial)


def test_a_learner_without_positives_gives_nothing():
    n_bins = np.array([2, 2])
    codes = np.array([[0, 0], [1, 1]])
    records = distinct_records(codes, n_bins, np.zeros(2), np.ones(2))
    assert len(learn_subset(records, n_bins, [0, 1])) == 0


def test_a_mostly_negative_seed_grows_over_a_clean_point_unless_seeds_need_a_share():
    """One column of three categories: East all positive, North and South mostly negative
    with a few positives. A contradiction seed (North) grows to {East, North} and the
    irredundant boundary drops the clean {East}; with ``min_seed_share=0.5`` only East seeds."""
    n_bins = np.array([3])
    codes = np.array([[0], [1], [2]])
    records = distinct_records(
        codes, n_bins, np.array([170.0, 1.0, 1.0]), np.array([0, 109, 113.0])
    )

    def allowed(candidates):
        return sorted(tuple(np.flatnonzero(~p)) for p in candidates.points)

    assert allowed(learn_subset(records, n_bins, [0])) == [(0, 1), (0, 2)]
    assert allowed(learn_subset(records, n_bins, [0], min_seed_share=0.5)) == [(0,)]


def test_fixed_subset_sizes_and_the_prefix_property():
    pool = list(range(9))
    fixed = draw_feature_subsets(pool, 20, 4, np.random.RandomState(3), sizes="fixed")
    assert all(len(s) == 4 for s in fixed)
    cycle = draw_feature_subsets(pool, 20, 4, np.random.RandomState(3))
    assert sorted({len(s) for s in cycle}) == [1, 2, 3, 4]
    # fewer estimators draw the first subsets of more estimators, for both policies
    for sizes in ("cycle", "fixed"):
        short = draw_feature_subsets(pool, 5, 4, np.random.RandomState(3), sizes=sizes)
        long = draw_feature_subsets(pool, 20, 4, np.random.RandomState(3), sizes=sizes)
        assert long[: len(short)] == short
    with pytest.raises(ValueError):
        draw_feature_subsets(pool, 5, 4, np.random.RandomState(3), sizes="random")


def test_contiguous_candidates_fill_the_gaps_of_ordered_blocks_and_recount():
    """Two features: the first numeric with 4 value bins and a missing bin (bits 0-4), the
    second categorical with 3 (bits 5-7). A one excludes a bin."""
    n_bins = np.array([5, 3])
    codes = np.array([[0, 0], [1, 1], [2, 2], [3, 0], [4, 1], [1, 0]])
    records = distinct_records(
        codes, n_bins, np.array([1.0, 1, 0, 1, 1, 0]), np.array([0.0, 0, 1, 0, 0, 1])
    )
    points = np.array(
        [
            [0, 1, 1, 0, 1, 0, 1, 0],  # bins 0 and 3 allowed, missing excluded -> 0-3
            [1, 0, 1, 0, 0, 0, 0, 0],  # bins 1 and 3 and missing -> 1-3 and missing
            [0, 1, 1, 1, 0, 1, 0, 1],  # only bin 0 (and missing): unchanged; category gap kept
            [0, 0, 0, 0, 1, 0, 0, 0],  # already contiguous: unchanged
            [0, 0, 0, 0, 1, 0, 1, 0],  # the first one, widened: dropped as its duplicate
        ],
        dtype=bool,
    )
    zeros = ZeroSets.from_codes(records.codes, n_bins)
    weights = records.positive_weight, records.negative_weight
    before = Candidates(points, *covered_counts(points, zeros, *weights))
    after = contiguous_candidates(before, records, n_bins, [(0, 4)])
    expected = np.array(
        [
            [0, 0, 0, 0, 1, 0, 1, 0],
            [1, 0, 0, 0, 0, 0, 0, 0],
            [0, 1, 1, 1, 0, 1, 0, 1],
            [0, 0, 0, 0, 1, 0, 0, 0],
        ],
        dtype=bool,
    )
    np.testing.assert_array_equal(after.points, expected)
    recount = covered_counts(expected, zeros, *weights)
    np.testing.assert_array_equal(after.positives, recount[0])
    np.testing.assert_array_equal(after.negatives, recount[1])
    assert after.negatives[0] > before.negatives[0]  # the widened rule now covers bin 1 and 2
    # nothing to fill: the same object back
    assert contiguous_candidates(after, records, n_bins, [(0, 4)]) is after
    assert contiguous_candidates(before, records, n_bins, []) is before


def test_widening_each_learner_gives_the_widened_union():
    """contiguous=True widens every learner's points on its own distinct records: the union of
    those equals the plain union widened and recounted on the full records, in order."""
    X, y, info = load_dataset("pima")
    clf = LibreClassifier(positive_class=info.positive_class, random_state=0, n_estimators=20)
    target = binary_target(y, info.positive_class, n_rows=len(y))
    disc = clf.discretize(X, target, max_intervals=None)
    records = clf.encode(X, target, disc)
    subsets = clf.draw_subsets(disc)
    ordered = disc.ordered_bins()
    blocks = [
        (int(start), int(size))
        for start, size in zip(offsets(disc.n_bins), ordered, strict=True)
        if size >= 3
    ]
    plain = fit_ensemble(records, disc.n_bins, subsets, conflict_tolerance=0.5)
    expected = contiguous_candidates(plain, records, disc.n_bins, blocks)
    widened = fit_ensemble(records, disc.n_bins, subsets, conflict_tolerance=0.5, ordered=ordered)
    assert len(expected) < len(plain)  # widening merged candidates: the case is not trivial
    np.testing.assert_array_equal(widened.points, expected.points)
    np.testing.assert_array_equal(widened.positives, expected.positives)
    np.testing.assert_array_equal(widened.negatives, expected.negatives)
