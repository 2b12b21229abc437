"""ChiMerge with pre-binning and an interval cap, missing bins, categorical bins."""

import warnings

import numpy as np
import pandas as pd
import pytest

from libre_lib.discretization import (
    CATEGORICAL,
    NUMERIC,
    Discretization,
    FeatureBins,
    _merge,
    chi2_adjacent,
    chimerge_cuts,
    fit_discretization,
)
from libre_lib.errors import DataError, LibreWarning, ParameterError
from libre_lib.inputs import resolve_categorical

# --- chi-square of adjacent intervals ------------------------------------------------------


def test_chi2_adjacent_hand_computed():
    # rows are intervals, columns (negatives, positives); for the 2x2 table [[a, b], [c, d]]
    # chi2 = N (ad - bc)^2 / ((a+b)(c+d)(a+c)(b+d)), and 0 when a marginal is 0.
    counts = np.array([[2, 0], [0, 2], [1, 1], [1, 1], [3, 1], [1, 3], [2, 0], [3, 0]], dtype=float)
    expected = [
        4 * (2 * 2 - 0) ** 2 / (2 * 2 * 2 * 2),  # 4.0: pure and different
        4 * (0 * 1 - 2 * 1) ** 2 / (2 * 2 * 1 * 3),  # 16/12
        0.0,  # identical distributions
        6 * (1 * 1 - 1 * 3) ** 2 / (2 * 4 * 4 * 2),  # 24/64
        8 * (3 * 3 - 1 * 1) ** 2 / (4 * 4 * 4 * 4),  # 2.0
        6 * (1 * 0 - 3 * 2) ** 2 / (4 * 2 * 3 * 3),  # 3.0
        0.0,  # both intervals pure negative: the positives marginal is 0
    ]
    np.testing.assert_allclose(chi2_adjacent(counts), expected)
    np.testing.assert_allclose(expected[:2] + expected[3:6], [4, 4 / 3, 0.375, 2, 3])


def test_chi2_adjacent_zero_marginals_give_zero_without_warnings():
    counts = np.array([[0, 0], [1, 1], [0, 0], [5, 0], [0, 0]], dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert chi2_adjacent(counts).tolist() == [0.0, 0.0, 0.0, 0.0]


def test_chi2_adjacent_of_a_single_interval_is_empty():
    assert chi2_adjacent(np.array([[3.0, 4.0]])).shape == (0,)


# --- ChiMerge ------------------------------------------------------------------------------

VALUES_1_TO_8 = np.arange(1.0, 9.0)
LABELS_4_4 = np.array([0, 0, 0, 0, 1, 1, 1, 1], dtype=bool)


def test_chimerge_one_cut_between_the_two_classes():
    # Pure neighbours of the same class have chi2 = 0 and merge first, then (j, 0) vs (0, 1)
    # pairs grow: the last pair [1, 5) vs [5, 9) = (4, 0) vs (0, 4) has chi2 = 8 >= 4.6.
    assert chimerge_cuts(VALUES_1_TO_8, LABELS_4_4, threshold=4.6).tolist() == [5.0]


def test_chimerge_threshold_zero_merges_nothing():
    # chi2 < 0 never holds: even pure-but-different neighbours (chi2 = 2) stay apart, and so do
    # pure neighbours of the same class (chi2 = 0, not < 0).
    assert chimerge_cuts(VALUES_1_TO_8, LABELS_4_4, threshold=0).tolist() == [
        2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0,
    ]  # fmt: skip


def test_chimerge_high_threshold_merges_everything():
    assert chimerge_cuts(VALUES_1_TO_8, LABELS_4_4, threshold=100.0).tolist() == []


def test_chimerge_cuts_are_smallest_values_of_the_right_interval():
    values = np.array([10.0, 10.0, 3.5, 3.5, 7.25, 7.25, 7.25, 3.5])
    positive = np.array([1, 1, 0, 0, 1, 1, 1, 0], dtype=bool)
    assert chimerge_cuts(values, positive, threshold=4.6).tolist() == [7.25]


def test_chimerge_degenerate_inputs():
    assert chimerge_cuts(np.empty(0), np.empty(0, dtype=bool), 4.6).tolist() == []
    assert chimerge_cuts(np.full(5, 2.0), np.array([0, 1, 0, 1, 1], bool), 0).tolist() == []


def _three_value_data(first, second, third, copies=1):
    """Values 1, 2, 3 with (negatives, positives) counts per value."""
    values, labels = [], []
    for v, (neg, pos) in zip((1.0, 2.0, 3.0), (first, second, third), strict=True):
        values += [v] * (neg + pos) * copies
        labels += ([False] * neg + [True] * pos) * copies
    return np.array(values), np.array(labels)


def test_interval_cap_merges_the_lowest_chi2_pair_even_above_threshold():
    # 1: (10, 0), 2: (0, 10), 3: (5, 5). chi2(1|2) = 20, chi2(2|3) = 20*50^2/7500 = 6.67: both
    # are above 4.6, so plain ChiMerge keeps 3 intervals; the cap of 2 merges the lower pair.
    values, positive = _three_value_data((10, 0), (0, 10), (5, 5))
    assert chimerge_cuts(values, positive, 4.6).tolist() == [2.0, 3.0]
    assert chimerge_cuts(values, positive, 4.6, max_intervals=2).tolist() == [2.0]
    assert chimerge_cuts(values, positive, 4.6, max_intervals=1).tolist() == []


def test_interval_cap_picks_the_lowest_pair_not_the_last_one():
    # Mirror image: now the (5, 5) interval is first, so the pair 1|2 is the lowest.
    values, positive = _three_value_data((5, 5), (0, 10), (10, 0))
    assert chimerge_cuts(values, positive, 4.6).tolist() == [2.0, 3.0]
    assert chimerge_cuts(values, positive, 4.6, max_intervals=2).tolist() == [3.0]


def test_interval_cap_above_the_number_of_intervals_changes_nothing():
    values, positive = _three_value_data((10, 0), (0, 10), (5, 5))
    assert chimerge_cuts(values, positive, 4.6, max_intervals=3).tolist() == [2.0, 3.0]


def _reference_merge(counts, threshold, max_intervals, min_count):
    """ChiMerge's merge loop written plainly with numpy (the definition the compiled loop
    must follow exactly): the kept intervals' indices and their merged counts."""
    counts = counts.astype(float).copy()
    kept = np.arange(counts.shape[0])
    chi2 = chi2_adjacent(counts)
    cap = np.inf if max_intervals is None else max_intervals
    while chi2.size:
        sizes = counts.sum(axis=1)
        small = int(np.argmin(sizes))
        if min_count > 0 and sizes[small] < min_count:
            if small == 0:
                j = 0
            elif small == chi2.size:
                j = small - 1
            else:
                j = small - 1 if chi2[small - 1] <= chi2[small] else small
        else:
            j = int(np.argmin(chi2))
            if not (chi2[j] < threshold or counts.shape[0] > cap):
                break
        counts[j] += counts[j + 1]
        counts = np.delete(counts, j + 1, axis=0)
        kept = np.delete(kept, j + 1)
        chi2 = np.delete(chi2, j)
        lo, hi = max(j - 1, 0), min(j + 1, counts.shape[0] - 1)
        chi2[lo:hi] = chi2_adjacent(counts[lo : hi + 1])
    return kept, counts


@pytest.mark.parametrize("seed", range(40))
def test_compiled_merge_follows_the_plain_definition_exactly(seed):
    # Small integer counts make ties (equal chi-squares) common: the leftmost pair must win,
    # as numpy's argmin picks it, or the cut points (and the rules) would differ by runner.
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 80))
    counts = rng.integers(0, 6, size=(k, 2)).astype(float)
    if seed % 3 == 0:
        counts *= rng.uniform(0.1, 3.0, size=(k, 1))  # weighted rows
    lefts = np.sort(rng.choice(10_000, size=k, replace=False)).astype(float)
    threshold = float(rng.choice([0.0, 2.7, 4.0, 4.6, 6.0, 1e9]))
    max_intervals = [None, 1, 3, 10][seed % 4]
    min_count = [0.0, 0.0, 3.0, 12.0][(seed // 4) % 4]
    kept, expected = _reference_merge(counts, threshold, max_intervals, min_count)
    merged, merged_lefts = _merge(counts, lefts, threshold, max_intervals, min_count)
    assert merged_lefts.tolist() == lefts[kept].tolist()
    assert merged.tolist() == expected.tolist()


def _reference_sweeps(counts, threshold):
    """The reference code's pass-based merge written plainly: each sweep walks left to right,
    merging a pair at most the threshold and stepping past the merged interval."""
    intervals = [(list(c), i) for i, c in enumerate(counts.astype(float))]
    changed = True
    while changed:
        changed = False
        i = 0
        while i < len(intervals) - 1:
            pair = np.array([intervals[i][0], intervals[i + 1][0]])
            if chi2_adjacent(pair)[0] <= threshold:
                merged = [a + b for a, b in zip(intervals[i][0], intervals[i + 1][0], strict=True)]
                intervals[i : i + 2] = [(merged, intervals[i][1])]
                changed = True
            i += 1
    return [i for _, i in intervals], [c for c, _ in intervals]


@pytest.mark.parametrize("seed", range(20))
def test_sweep_merge_follows_the_reference_passes_then_the_cap(seed):
    rng = np.random.default_rng(100 + seed)
    k = int(rng.integers(1, 60))
    counts = rng.integers(0, 6, size=(k, 2)).astype(float)
    lefts = np.arange(k, dtype=float)
    threshold = float(rng.choice([0.0, 2.7, 4.6, 6.0]))
    kept, expected = _reference_sweeps(counts, threshold)
    merged, merged_lefts = _merge(counts, lefts, threshold, None, merge_order="sweep")
    assert merged_lefts.tolist() == lefts[kept].tolist()
    assert merged.tolist() == expected
    # a cap then merges the lowest pairs of the swept intervals, as for Kerber's order
    cap_kept, _ = _reference_merge(np.array(expected), -1.0, 2, 0.0)
    capped = _merge(counts, lefts, threshold, 2, merge_order="sweep")[1]
    assert capped.tolist() == lefts[kept][cap_kept].tolist()


def test_sweep_and_lowest_first_orders_differ_on_pure_runs():
    # (1, 0) | (0, 1) | (0, 1) at threshold 2.7: Kerber's order joins the two positive runs
    # first (chi-square 0), after which (1, 0) | (0, 2) has chi-square 3 and stays apart. The
    # sweep merges (1, 0) | (0, 1) first (chi-square 2), then (1, 1) | (0, 1) (0.75).
    values, positive = _three_value_data((1, 0), (0, 1), (0, 1))
    assert chimerge_cuts(values, positive, 2.7).tolist() == [2.0]
    assert chimerge_cuts(values, positive, 2.7, merge_order="sweep").tolist() == []


def test_sweep_leaves_fewer_intervals_on_a_noise_column():
    rng = np.random.default_rng(0)
    values, positive = rng.uniform(0, 100, 5_000), rng.random(5_000) < 0.5
    lowest = chimerge_cuts(values, positive, 4.6)
    swept = chimerge_cuts(values, positive, 4.6, merge_order="sweep")
    assert swept.size < lowest.size


def test_prebinning_large_noisy_feature():
    rng = np.random.RandomState(0)
    values = rng.normal(size=100_000).round(4)
    positive = rng.rand(values.size) < 1 / (1 + np.exp(-2 * values))
    assert np.unique(values).size > 256
    cuts = chimerge_cuts(values, positive, threshold=4.6, max_intervals=8, max_prebins=256)
    assert 1 <= len(cuts) <= 7
    assert np.all(np.diff(cuts) > 0)
    assert set(cuts.tolist()) <= set(values.tolist())


def test_prebinning_keeps_a_heavy_value_apart_from_its_neighbours():
    # 90 zeros (negatives) and the values 1..10 (positives): 11 distinct values > 8 pre-bins.
    # Without pre-binning ChiMerge cuts at 1; pre-binning must not lose that cut.
    values = np.r_[np.zeros(90), np.arange(1.0, 11.0)]
    assert chimerge_cuts(values, values > 0, 4.6).tolist() == [1.0]
    assert chimerge_cuts(values, values > 0, 4.6, max_prebins=8).tolist() == [1.0]


def test_prebinning_with_a_frequent_zero_and_default_settings():
    # 4000 zeros and 1000 distinct values 1..1000 (6 rows each); positive iff 1 <= x < 51.
    values = np.r_[np.zeros(4000), np.repeat(np.arange(1.0, 1001.0), 6)]
    positive = (values >= 1) & (values < 51)
    assert chimerge_cuts(values, positive, 4.6, 8, max_prebins=10**6).tolist() == [1.0, 51.0]
    assert chimerge_cuts(values, positive, 4.6, 8)[0] == 1.0


def test_prebinning_bounds_the_number_of_intervals_without_merging():
    # threshold 0 and no cap: the result is exactly the pre-bins (10 values in 5 groups of 2).
    values = np.arange(10.0)
    positive = np.arange(10) % 2 == 0
    assert chimerge_cuts(values, positive, 0, None, max_prebins=5).tolist() == [2, 4, 6, 8]
    assert len(chimerge_cuts(values, positive, 0, None, max_prebins=9)) == 8


# --- fit_discretization ----------------------------------------------------------------------


def fit(frame, positive, categorical=None, **kwargs):
    flags = resolve_categorical(frame, categorical)
    return fit_discretization(frame, np.asarray(positive, dtype=bool), flags, **kwargs)


def test_missing_values_get_their_own_bin():
    frame = pd.DataFrame({"x": [1.0, 2.0, np.nan, 8.0, 9.0, np.nan] * 3})
    positive = [0, 0, 1, 1, 1, 1] * 3
    disc = fit(frame, positive, chi2_threshold=0.0, max_intervals=None)
    (bins,) = disc.features
    assert bins.kind == NUMERIC
    assert bins.has_missing
    assert bins.cuts == (2.0, 8.0, 9.0)
    assert bins.n_value_bins == 4
    assert bins.missing_bin == 4
    assert bins.n_bins == 5
    codes = disc.transform(frame)[:, 0]
    assert codes[:6].tolist() == [0, 1, 4, 2, 3, 4]


def test_no_missing_bin_when_training_has_no_missing_values():
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    disc = fit(frame, [0, 0, 1, 1], chi2_threshold=0.0, max_intervals=None)
    (bins,) = disc.features
    assert not bins.has_missing
    assert bins.missing_bin is None
    assert bins.codes(pd.Series([np.nan, 2.5], name="x")).tolist() == [-1, 1]


def test_numbers_beyond_the_training_range_fall_in_the_open_end_intervals():
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    disc = fit(frame, [0, 0, 1, 1], chi2_threshold=0.0, max_intervals=None)
    codes = disc.features[0].codes(pd.Series([-1e9, 0.0, 2.0, 4.0, 4.5, 1e9], name="x"))
    assert codes.tolist() == [0, 0, 1, 3, 3, 3]


@pytest.mark.parametrize(
    "column",
    [
        pd.Series(["b", "a", "c", "a", "b", "c"], dtype=object),
        pd.Series(["b", "a", "c", "a", "b", "c"], dtype="string"),
        pd.Series(["b", "a", "c", "a", "b", "c"], dtype="str"),
        pd.Series(pd.Categorical(["b", "a", "c", "a", "b", "c"], categories=["c", "b", "a", "z"])),
    ],
    ids=["object", "string", "str", "category"],
)
def test_string_like_columns_get_one_bin_per_category(column):
    frame = pd.DataFrame({"s": column})
    disc = fit(frame, [1, 0, 0, 0, 1, 0])
    (bins,) = disc.features
    assert bins.kind == CATEGORICAL
    # sorted categories seen in training (the unused category "z" gets no bin)
    assert bins.categories == ("a", "b", "c")
    assert not bins.has_missing
    assert disc.transform(frame)[:, 0].tolist() == [1, 0, 2, 0, 1, 2]


def test_bool_column_is_categorical():
    frame = pd.DataFrame({"flag": [True, False, True, False]})
    disc = fit(frame, [1, 0, 1, 0])
    assert disc.features[0].kind == CATEGORICAL
    assert disc.features[0].categories == (False, True)
    assert disc.transform(frame)[:, 0].tolist() == [1, 0, 1, 0]


def test_categorical_features_forces_a_numeric_column_to_categories():
    frame = pd.DataFrame({"code": [30, 10, 20, 10, 30, 20], "x": [1.0, 2, 3, 4, 5, 6]})
    disc = fit(frame, [1, 0, 0, 0, 1, 0], categorical=["code"], chi2_threshold=0.0)
    code, x = disc.features
    assert code.kind == CATEGORICAL
    assert code.categories == (10, 20, 30)
    assert x.kind == NUMERIC
    assert disc.transform(frame)[:, 0].tolist() == [2, 0, 1, 0, 2, 1]


def test_categorical_missing_values_get_a_bin():
    frame = pd.DataFrame({"s": ["a", None, "b", np.nan, "a", "b"]})
    disc = fit(frame, [1, 1, 0, 1, 0, 0])
    (bins,) = disc.features
    assert bins.categories == ("a", "b")
    assert bins.has_missing
    assert bins.missing_bin == 2
    assert disc.transform(frame)[:, 0].tolist() == [0, 2, 1, 2, 0, 1]


def test_unseen_category_and_unexpected_missing_get_code_minus_one():
    frame = pd.DataFrame({"s": ["a", "b", "a", "b"]})
    disc = fit(frame, [1, 0, 1, 0])
    codes = disc.features[0].codes(pd.Series(["b", "zzz", None, "a", np.nan], name="s"))
    assert codes.tolist() == [1, -1, -1, 0, -1]


def test_unseen_category_with_a_missing_bin_is_still_minus_one():
    frame = pd.DataFrame({"s": ["a", "b", None, "b"]})
    disc = fit(frame, [1, 0, 1, 0])
    codes = disc.features[0].codes(pd.Series(["zzz", None], name="s"))
    assert codes.tolist() == [-1, 2]


def test_constant_and_all_missing_columns_are_dropped_with_a_warning():
    frame = pd.DataFrame(
        {
            "constant": [7.0] * 4,
            "empty": [np.nan] * 4,
            "empty_text": pd.Series([None] * 4, dtype=object),
            "same_text": ["k"] * 4,
            "x": [1.0, 2.0, 3.0, 4.0],
        }
    )
    with pytest.warns(LibreWarning) as record:
        disc = fit(frame, [0, 0, 1, 1], categorical=["empty_text"])
    messages = [str(w.message) for w in record]
    dropped = [m for m in messages if "dropped" in m]
    assert dropped == [  # one warning per reason, in the order of the first column of each
        "Columns 'constant', 'same_text' are dropped: each has a single value, so no rule can "
        "use them.",
        "Columns 'empty', 'empty_text' are dropped: all their values are missing, so no rule "
        "can use them.",
    ]
    assert disc.dropped == ("constant", "empty", "empty_text", "same_text")
    assert disc.names == ["x"]


def test_single_value_plus_missing_is_kept():
    # "7 or missing" still separates records: a value bin and a missing bin.
    frame = pd.DataFrame({"x": [7.0, np.nan, 7.0, np.nan]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", LibreWarning)
        disc = fit(frame, [1, 0, 1, 0])
    assert disc.features[0].n_bins == 2
    assert disc.transform(frame)[:, 0].tolist() == [0, 1, 0, 1]


def test_numeric_column_with_text_is_refused_naming_the_column():
    frame = pd.DataFrame({"age": pd.Series([1, "x", 3], dtype=object)})
    with pytest.raises(DataError, match="Column 'age' should be numeric"):
        fit_discretization(frame, np.array([1, 0, 1], bool), [False])


def test_infinite_values_are_refused_naming_the_column():
    frame = pd.DataFrame({"load": [1.0, np.inf, 3.0, -np.inf]})
    with pytest.raises(DataError, match="Column 'load' holds 2 infinite value"):
        fit(frame, [1, 0, 1, 0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"chi2_threshold": -1.0}, "'chi2_threshold' parameter"),
        ({"chi2_threshold": float("nan")}, "'chi2_threshold' parameter"),
        ({"max_intervals": 0}, "'max_intervals' parameter"),
    ],
)
def test_invalid_parameters(kwargs, message):
    frame = pd.DataFrame({"x": [1.0, 2.0]})
    with pytest.raises(ParameterError, match=message):
        fit(frame, [0, 1], **kwargs)


def test_discretization_dict_round_trip():
    disc = Discretization(
        (
            FeatureBins("CPU", NUMERIC, cuts=(81.0, 95.0), has_missing=True),
            FeatureBins("os", CATEGORICAL, categories=("linux", "windows")),
        ),
        dropped=("host",),
    )
    again = Discretization.from_dict(disc.to_dict())
    assert again == disc
    assert again.n_bins.tolist() == [4, 2]


def test_speck_removal_merges_tiny_intervals_when_asked():
    # 1 000 negatives over 0..99 and 9 positives at 500: without a floor the positives keep
    # their own interval (the imbalanced case), with a 1 % floor they are merged away.
    values = np.r_[np.linspace(0, 99, 1000), np.full(9, 500.0)]
    positive = np.r_[np.zeros(1000, bool), np.ones(9, bool)]
    assert list(chimerge_cuts(values, positive, 4.6, max_intervals=3)) == [500.0]
    merged = chimerge_cuts(values, positive, 4.6, max_intervals=3, min_fraction=0.01)
    assert 500.0 not in list(merged)


def test_an_id_like_column_draws_a_warning_saying_what_to_do():
    rng = np.random.default_rng(0)
    codes = np.concatenate([np.arange(1_900), rng.integers(0, 1_900, 100)])
    frame = pd.DataFrame({"zip": pd.Series(codes).map(lambda v: f"z{v:05d}")})
    positive = rng.random(2_000) < 0.3
    message = r"Categorical column 'zip' has 1,900 distinct values in 2,000 rows: .* an id"
    with pytest.warns(LibreWarning, match=message):
        fit_discretization(frame, positive, [True])
    many = pd.DataFrame({"zip": frame["zip"].str[-3:]})  # 1,000 categories, 2 rows each
    with warnings.catch_warnings():
        warnings.simplefilter("error", LibreWarning)
        fit_discretization(many, positive, [True])


def test_a_fit_warns_about_an_id_like_column_before_its_inner_choice_once():
    """The warning came from the binning step, after the "auto" choice had run for minutes with
    the library's warnings silenced."""
    from libre_lib import LibreClassifier
    from libre_lib.estimator import LibreClassifier as Estimator

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"zip": [f"z{v:04d}" for v in rng.permutation(1_000)]})
    X["a"] = rng.uniform(0, 1, 1_000)
    y = (X["a"] > 0.6).to_numpy()
    seen = []
    original = Estimator.choose_auto

    def choose_auto(self, frame, target):
        seen.append([str(w.message) for w in caught])  # what was said before the choice
        return original(self, frame, target)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Estimator.choose_auto = choose_auto
        try:
            LibreClassifier(random_state=0, n_estimators=5).fit(X, y)
        finally:
            Estimator.choose_auto = original
    said = [w for w in caught if "has 1,000 distinct values" in str(w.message)]
    assert len(said) == 1 and said[0].filename == __file__
    assert any("has 1,000 distinct values" in m for m in seen[0])


# --- columns of many categories: grouped by positive share --------------------------------


def _city_data(n_rows=6_000, n_cities=150, seed=0):
    """Cities with one of three positive shares (0.1, 0.5, 0.9), plus a few rare cities."""
    rng = np.random.default_rng(seed)
    city = rng.integers(0, n_cities, n_rows)
    share = np.array([0.1, 0.5, 0.9])[city % 3]
    positive = rng.random(n_rows) < share
    names = np.array([f"city{c:03d}" for c in range(n_cities)], dtype=object)[city]
    names[:20] = [f"rare{i}" for i in range(20)]  # 20 categories of one row each
    return pd.DataFrame({"city": names}), positive, city


def _shares_by_bin(feature) -> dict:
    bin_of = dict(zip(feature.categories, feature.groups, strict=True))
    shares = {}
    for c in range(150):
        shares.setdefault(bin_of[f"city{c:03d}"], set()).add(c % 3)
    return shares


def test_many_categories_are_grouped_by_their_positive_share():
    frame, positive, _ = _city_data(n_rows=30_000)
    capped = fit_discretization(frame, positive, [True], max_intervals=3).features[0]
    assert len(capped.categories) == 170 and capped.n_value_bins == 3  # 170 bins before
    # capped at the three true shares: one bin per share
    assert sorted(map(sorted, _shares_by_bin(capped).values())) == [[0], [1], [2]]
    feature = fit_discretization(frame, positive, [True], max_intervals=None).features[0]
    # uncapped, ChiMerge keeps some cuts inside a share (sorting by the observed share makes
    # neighbours look different), but never mixes two shares in one bin
    assert feature.n_value_bins <= 12
    assert all(len(shares) == 1 for shares in _shares_by_bin(feature).values())
    bin_of = dict(zip(feature.categories, feature.groups, strict=True))
    # rare categories are pooled: one bin for all twenty, whatever their own labels
    assert len({bin_of[f"rare{i}"] for i in range(20)}) == 1
    codes = feature.codes(frame["city"])
    assert codes.tolist() == [bin_of[c] for c in frame["city"]]
    unseen = feature.codes(pd.Series(["nowhere", None, "city001"]))
    assert unseen.tolist() == [-1, -1, bin_of["city001"]]
    members = feature.bin_categories(bin_of["city001"])
    assert "city001" in members and "city000" not in members
    assert members == tuple(c for c in feature.categories if bin_of[c] == bin_of["city001"])
    assert FeatureBins.from_dict(feature.to_dict()) == feature


def test_few_categories_keep_one_bin_each():
    frame, positive, _ = _city_data(n_cities=100)
    frame = frame.iloc[20:]  # no rare city: 100 categories
    feature = fit_discretization(frame, positive[20:], [True]).features[0]
    assert feature.groups == () and feature.n_value_bins == 100
    assert "groups" not in feature.to_dict()


def test_grouping_depends_on_the_counts_not_their_order():
    # the streamed pipeline merges per-batch counts in another order than one frame's
    from libre_lib.discretization import column_counts, feature_bins

    frame, positive, _ = _city_data()
    whole = column_counts("city", frame["city"], positive, True)
    shuffled = np.random.default_rng(1).permutation(len(whole.values))
    permuted = type(whole)(
        "city",
        whole.kind,
        whole.values[shuffled],
        whole.counts[shuffled],
        whole.n_present,
        whole.n_missing,
    )
    assert feature_bins(whole, 4.6, None)[0] == feature_bins(permuted, 4.6, None)[0]


def test_id_like_categories_fall_in_one_bin_not_one_per_class():
    # every category is one row: their own shares are 0 or 1, which would split the rows by
    # their labels and give a rule that is perfect on the training rows and never fires again
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"id": [f"row{i}" for i in range(500)]})
    positive = rng.random(500) < 0.4
    with pytest.warns(LibreWarning, match="looks like an id"):
        feature = fit_discretization(frame, positive, [True], max_intervals=None).features[0]
    assert feature.n_value_bins == 1


def test_rules_on_grouped_categories_list_them_and_predict_as_the_model():
    from libre_lib import LibreClassifier

    frame, positive, _ = _city_data(n_rows=4_000)
    rng = np.random.default_rng(3)
    frame["x"] = rng.normal(size=len(frame))
    model = LibreClassifier(random_state=0, n_estimators=10).fit(frame, positive)
    feature = model.discretization_.features[0]
    assert feature.groups
    tested = [c for rule in model.rules_ for c in rule if c.feature == "city"]
    assert tested and all(len(c.categories) > 1 for c in tested)
    # the rules, written with categories, cover on the training rows what the learners'
    # bins covered (the statistics come from the binned records)
    fired = model.rules_.fired(frame)
    for j, stats in enumerate(model.rules_.stats):
        assert fired[positive, j].sum() == stats.positives
        assert fired[~positive, j].sum() == stats.negatives
    fresh, _, _ = _city_data(n_rows=1_000, seed=7)
    fresh["x"] = rng.normal(size=len(fresh))
    fresh.loc[:4, "city"] = "unseen"
    again = LibreClassifier.from_json(model.to_json())
    np.testing.assert_array_equal(again.predict(fresh), model.predict(fresh))


def test_a_numeric_column_of_row_ids_draws_a_warning_naming_it():
    rng = np.random.default_rng(0)
    positive = rng.random(400) < 0.3
    frame = pd.DataFrame(
        {
            "customer_id": rng.choice(10**7, 400, replace=False),
            "line": np.arange(400.0),  # a float column of running numbers
            "amount": rng.normal(size=400).round(2),  # continuous: repeats are rare, not whole
            "visits": rng.integers(0, 20, 400),  # whole numbers that repeat
            "joules": rng.normal(1e20, 1e19, 400),  # every float this large is whole: no id
        }
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_discretization(frame, positive, [False] * 5)
    said = [str(w.message) for w in caught if issubclass(w.category, LibreWarning)]
    assert len(said) == 2, said
    assert said[0].startswith("Column 'customer_id' holds a different whole number in each")
    assert said[1].startswith("Column 'line' holds a different whole number")
    assert "exclude it" in said[0]


# -- significant cuts (twentieth design round) -------------------------------------------------


def test_fisher_p_matches_the_hypergeometric_tails():
    from scipy.stats import hypergeom

    from libre_lib.discretization import _fisher_p

    rng = np.random.default_rng(0)
    for _ in range(500):
        n1, n2 = (int(v) for v in rng.integers(1, 300, 2))
        a, b = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
        low = hypergeom.cdf(a, n1 + n2, a + b, n1)
        high = hypergeom.sf(a - 1, n1 + n2, a + b, n1)
        expected = min(1.0, 2 * min(low, high))
        if 1e-250 < expected < 0.2:  # near 1 the tails' doubling is a convention, not a test
            assert _fisher_p(n1 - a, a, n2 - b, b) == pytest.approx(expected, rel=1e-9)
    assert _fisher_p(10, 0, 20, 0) == 1.0  # one class only: nothing to tell apart
    assert _fisher_p(0, 0, 5, 5) == 1.0  # an empty interval


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_significant_cuts_drop_the_specks_of_noise_and_keep_the_real_step(seed):
    rng = np.random.default_rng(seed)
    values = rng.uniform(0, 100, 4_000)
    positive = rng.random(4_000) < np.where(values > 60, 0.6, 0.1)  # one real step at 60
    plain = chimerge_cuts(values, positive, 6.0)
    cuts = chimerge_cuts(values, positive, 6.0, significant_cuts=True)
    assert plain.size >= 2  # ChiMerge alone keeps specks of a dozen rows
    assert cuts.size == 1 and abs(cuts[0] - 60) < 1 and cuts[0] in plain


def test_significant_cuts_keep_a_small_interval_that_is_very_pure():
    """A size floor would merge it: 2 % of the rows, but 40 of 40 positive at a base of 10 %."""
    values = np.arange(2_000, dtype=float)
    positive = np.zeros(2_000, dtype=bool)
    positive[::10] = True
    positive[1_000:1_040] = True
    cuts = chimerge_cuts(values, positive, 6.0, significant_cuts=True)
    assert set(cuts) == {1_000.0, 1_040.0}


def test_significant_cuts_in_the_estimator_and_its_model_file():
    from libre_lib import LibreClassifier

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"x": rng.uniform(0, 100, 3_000), "c": rng.choice(["a", "b"], 3_000)})
    y = rng.random(3_000) < np.where(X["x"] > 60, 0.6, 0.1)
    params = dict(random_state=0, max_intervals=None, max_rules=3, alpha=0.5)
    plain = LibreClassifier(**params, conflict_tolerance=0).fit(X, y)
    model = LibreClassifier(**params, conflict_tolerance=0, significant_cuts=True).fit(X, y)
    x_cuts = model.discretization_.features[0].cuts
    assert len(x_cuts) == 1 and len(plain.discretization_.features[0].cuts) > 1
    assert model.discretization_.features[1] == plain.discretization_.features[1]  # categories
    again = LibreClassifier.from_json(model.to_json())
    assert again.significant_cuts is True
    assert np.array_equal(again.predict(X), model.predict(X))


def test_a_column_significant_cuts_leave_whole_keeps_its_quartiles():
    """The thirty-seventh round: y = x0 > 0.5 XOR x1 > 0.5 shows no difference on either column
    alone, so significant cuts left both without a cut point and no rule could test them
    (holdout F1 0.66 against 0.94 before); their quartiles let the learners combine them."""
    from libre_lib import LibreClassifier
    from libre_lib.discretization import quartile_cuts

    rng = np.random.default_rng(1)
    X = pd.DataFrame({f"x{i}": rng.uniform(0, 1, 8_000) for i in range(3)})
    y = (X["x0"] > 0.5) ^ (X["x1"] > 0.5)
    y = np.where(rng.random(8_000) < 0.05, ~y, y)
    for column in ("x0", "x1", "x2"):  # the noise column x2 as well: none differs alone
        cuts = chimerge_cuts(X[column].to_numpy(), y, 6.0, significant_cuts=True)
        values = np.sort(X[column].to_numpy())
        assert cuts.tolist() == [values[2_000], values[4_000], values[6_000]]
    step = rng.uniform(0, 100, 4_000)  # a column with a significant cut keeps only that one
    assert chimerge_cuts(step, rng.random(4_000) < np.where(step > 60, 0.6, 0.1), 6.0,
                         significant_cuts=True).size == 1  # fmt: skip
    params = dict(random_state=0, max_intervals=None, significant_cuts=True)
    model = LibreClassifier(**params).fit(X.iloc[:6_000], y[:6_000])
    predicted = model.predict(X.iloc[6_000:])
    assert np.mean(predicted == y[6_000:]) > 0.9  # chance is 0.5
    # weighted as the rows: the first value with at least a quarter of the rows below it
    assert quartile_cuts(np.array([1.0, 2.0, 3.0]), np.array([90, 5, 5])).tolist() == [2.0]
    assert quartile_cuts(np.array([0.0, 1.0]), np.array([50, 50])).tolist() == [1.0]
