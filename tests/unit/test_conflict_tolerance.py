"""The tolerant conflict test (``conflict_tolerance`` > 0, not in the paper)."""

import warnings

import numpy as np
import pandas as pd
import pytest

from libre_lib import LibreClassifier
from libre_lib.encoding import ZeroSets, distinct_records
from libre_lib.ensemble import learn_subset, tolerance_fits
from libre_lib.errors import LibreWarning, ParameterError
from libre_lib.inputs import binary_target
from libre_lib.search import LibreSearchCV
from libre_lib.weak_learner import find_boundary
from libre_lib.weak_learner.cells import slab_over_tolerance


def pure_cells_problem(seed, n=4000, n_bins=(4, 5, 3, 4), noise=0.15):
    """Records whose cells are pure (one class per cell), with a noisy learnable label."""
    rng = np.random.RandomState(seed)
    n_bins = np.asarray(n_bins)
    codes = np.column_stack([rng.randint(0, b, n) for b in n_bins])
    records = distinct_records(codes, n_bins, np.ones(n), np.zeros(n))
    cells = records.codes
    label = (cells[:, 0] >= 2) & (cells[:, 1] <= 2)
    label ^= rng.rand(cells.shape[0]) < noise
    weight = records.positive_weight  # multiplicities
    pos = ZeroSets.from_codes(cells[label], n_bins)
    neg = ZeroSets.from_codes(cells[~label], n_bins)
    return pos, neg, weight[label], weight[~label]


def covered(points, zeros):
    bits = zeros.to_bits()
    return ~(points[:, None, :] & ~bits[None, :, :]).any(axis=2)


@pytest.mark.parametrize("tolerance", [0.1, 0.5, 2.0])
def test_points_respect_the_tolerance(tolerance):
    pos, neg, wp, wn = pure_cells_problem(3)
    points = find_boundary(
        pos, neg, wp, "H1", "uncovered", conflict_tolerance=tolerance, negative_weight=wn
    )
    assert points.shape[0] > 0
    covered_pos = covered(points, pos) @ wp
    covered_neg = covered(points, neg) @ wn
    assert np.all(covered_neg <= tolerance * covered_pos + 1e-9)
    if tolerance < 1:
        # every positive is covered by some point (Algorithm 1 still covers all positives);
        # with a loose tolerance a seed may grow into the always-true element, which is no rule
        assert covered(points, pos).any(axis=0).all()


def test_exact_learner_covers_no_negative_and_tolerance_generalizes():
    pos, neg, wp, wn = pure_cells_problem(5)
    exact = find_boundary(pos, neg, wp)
    assert not covered(exact, neg).any()
    tolerant = find_boundary(pos, neg, wp, conflict_tolerance=0.5, negative_weight=wn)
    assert covered(tolerant, neg).any()  # noise is absorbed ...
    assert tolerant.shape[0] < exact.shape[0]  # ... by fewer, more general points


def test_tolerance_is_validated():
    pos, neg, wp, _ = pure_cells_problem(1, n=300)
    with pytest.raises(ParameterError, match="conflict_tolerance"):
        find_boundary(pos, neg, wp, "H2", conflict_tolerance=0.2)
    with pytest.raises(ParameterError, match="conflict_tolerance"):
        find_boundary(pos, neg, wp, conflict_tolerance=-1)
    X = pd.DataFrame({"a": np.arange(40.0), "b": np.arange(40.0) % 7})
    y = (X["a"] > 20).astype(int)
    with pytest.raises(ParameterError, match="'conflict_tolerance' parameter of LibreClassifier"):
        LibreClassifier(conflict_tolerance=0.3, heuristic="H2").fit(X, y)
    with pytest.raises(ParameterError, match="'conflict_tolerance' parameter of LibreClassifier"):
        LibreClassifier(conflict_tolerance=-0.1).fit(X, y)


def noisy_frame(seed, n=3000):
    rng = np.random.RandomState(seed)
    X = pd.DataFrame(rng.uniform(0, 100, (n, 4)), columns=["x0", "x1", "x2", "x3"])
    y = ((X["x0"] > 50) & (X["x1"] < 40)) ^ (rng.rand(n) < 0.1)
    return X, y.astype(int)


def test_estimator_with_tolerance_is_deterministic_and_round_trips():
    X, y = noisy_frame(0)
    params = dict(conflict_tolerance=0.3, n_estimators=10, random_state=4, max_intervals=6)
    a = LibreClassifier(**params).fit(X, y)
    b = LibreClassifier(**params).fit(X, y)
    assert str(a.rules_) == str(b.rules_)
    again = LibreClassifier.from_json(a.to_json())
    assert again.get_params()["conflict_tolerance"] == 0.3
    np.testing.assert_array_equal(again.predict(X), a.predict(X))
    exact = LibreClassifier(**{**params, "conflict_tolerance": 0.0}).fit(X, y)
    assert str(exact.rules_) != str(a.rules_)


def test_search_tunes_the_tolerance_like_plain_fits():
    X, y = noisy_frame(1, n=1500)
    grid = {"conflict_tolerance": [0.0, 0.4], "alpha": [0.5, 0.7]}
    base = LibreClassifier(n_estimators=8, max_intervals=5)
    search = LibreSearchCV(grid, estimator=base, cv=3, random_state=2).fit(X, y)
    best = LibreClassifier(**{**base.get_params(), **search.best_params_, "random_state": 2})
    best.fit(X, y)
    assert str(best.rules_) == str(search.rules_)


def test_a_flip_is_judged_by_the_records_it_adds():
    """Regression: the tolerance was a budget for the whole point, so a large, clean point
    could absorb a whole bin that is mostly negative (a level of a category, a missing bin, a
    ChiMerge interval of a relevant feature) as long as its total stayed under the tolerance.

    Two features, A with bins 0..2 and B with bins 0..1. The seed's cell (A=0, B=0) holds 100
    positives; (A=1, B=0) holds 30 negatives; (A=2, B=0) 40 positives and 10 negatives; B=1
    is negative. With tolerance 0.5 the grown point could take A=1 (30 negatives for 100
    positives), but A=1's own records are all negative: 30 against the 10 a negative share of
    1/3 allows, 20 over, more than three standard errors (sqrt(30 x 1/3 x 2/3) = 2.6). A=2
    (10 negatives, 40 positives) is under the tolerance and taken."""
    n_bins = np.array([3, 2])
    pos_codes = np.array([[0, 0], [2, 0]])
    neg_codes = np.array([[1, 0], [2, 0], [0, 1], [1, 1], [2, 1]])
    wp = np.array([100.0, 40.0])
    wn = np.array([30.0, 10.0, 200.0, 200.0, 200.0])
    pos = ZeroSets.from_codes(pos_codes, n_bins)
    neg = ZeroSets.from_codes(neg_codes, n_bins)
    points = find_boundary(
        pos, neg, wp, "H1", "uncovered", conflict_tolerance=0.5, negative_weight=wn
    )
    # bits: A=0, A=1, A=2, B=0, B=1; a point's ones are the bins it excludes
    assert points.tolist() == [[False, True, False, False, True]]


def test_few_records_over_the_tolerance_are_noise():
    """A slab of a few negatives is within sampling noise of the tolerance: the box's budget
    decides, as before (3 negatives, 0 positives: 2 over a share of 1/3, 1.5 standard
    errors)."""
    assert not slab_over_tolerance(3.0, 0.0, 0.5)
    assert slab_over_tolerance(30.0, 0.0, 0.5)
    assert not slab_over_tolerance(10.0, 40.0, 0.5)
    assert slab_over_tolerance(40_000.0, 2_000.0, 0.5)  # a whole mostly negative bin


def category_frame(seed, n=20_000):
    """y = (g == "a" AND x1 < 50) with 5 % of the labels flipped; level "b" (15 % of the rows)
    is as negative as level "c"."""
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(["a", "b", "c"], dtype=object), n, p=[0.5, 0.15, 0.35])
    X = pd.DataFrame({"x0": rng.uniform(0, 100, n), "x1": rng.uniform(0, 100, n), "g": g})
    y = ((X["g"] == "a") & (X["x1"] < 50)).to_numpy() ^ (rng.random(n) < 0.05)
    return X, y


def test_tolerant_rules_leave_out_a_level_where_they_would_be_wrong():
    """Regression (large-data quality): the tolerant learner's rule for g = "a" AND x1 < 50 also
    allowed level "b", where 95 % of the rows it adds are negative (training precision of the
    rule 0.76 instead of 0.95); the inner cross-validation then preferred the exact learner,
    whose rules split by irrelevant features on large data."""
    X, y = category_frame(0)
    model = LibreClassifier(conflict_tolerance=0.5, max_rules=None, random_state=0).fit(X, y)
    on_g = [c for rule in model.rules_ for c in rule if c.feature == "g"]
    assert on_g
    assert all(c.categories == ("a",) for c in on_g)
    assert all(s.precision > 0.9 for s in model.rules_.stats)


def wide_frame(seed, n=400, columns=30):
    """Many numeric columns, each with many ChiMerge bins: together too large a grid for the
    tolerant kernel's cell key when one learner sees all of them."""
    rng = np.random.RandomState(seed)
    X = pd.DataFrame(rng.normal(size=(n, columns)), columns=[f"x{i}" for i in range(columns)])
    y = (X.iloc[:, :columns].sum(axis=1) + rng.normal(scale=2, size=n) > 0).astype(int)
    return X, y


def test_a_subset_too_large_for_the_tolerance_learns_with_the_papers_test():
    X, y = wide_frame(0)
    clf = LibreClassifier(
        max_features=None,
        max_intervals=None,
        conflict_tolerance=0.5,
        n_estimators=3,
        subset_sizes="fixed",
        random_state=0,
    )
    largest = r"learners' feature subsets \(the largest has 30 features\)"
    with pytest.warns(LibreWarning, match=largest):
        clf.fit(X, y)
    disc = clf.discretize(X, binary_target(y))
    records = clf.encode(X, binary_target(y), disc)
    everything = list(range(len(disc.features)))
    assert not tolerance_fits(disc.n_bins, everything)
    assert tolerance_fits(disc.n_bins, everything[:3])
    tolerant = learn_subset(records, disc.n_bins, everything, conflict_tolerance=0.5)
    exact = learn_subset(records, disc.n_bins, everything, conflict_tolerance=0.0)
    np.testing.assert_array_equal(tolerant.points, exact.points)
    # the kernel itself names the cause when asked directly
    target = binary_target(y)
    pos = ZeroSets.from_codes(records.codes[records.positive_weight > 0], disc.n_bins)
    neg = ZeroSets.from_codes(records.codes[records.negative_weight > 0], disc.n_bins)
    with pytest.raises(ParameterError, match=r"the product of the 30 features' bin counts"):
        find_boundary(pos, neg, conflict_tolerance=0.5)
    assert target.positive.sum() == y.sum()


def test_auto_tolerance_fits_with_every_feature_in_one_learner():
    X, y = wide_frame(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        clf = LibreClassifier(max_features=None, n_estimators=5, random_state=0).fit(X, y)
    assert clf.conflict_tolerance_ in (0.0, 0.5)
    assert clf.score(X, y) > 0.5
