"""Inverse one-hot encoding (paper, Example 3.1), zero sets, distinct records, row keys."""

import numpy as np
import pandas as pd
import pytest

from libre_lib.discretization import NUMERIC, Discretization, FeatureBins
from libre_lib.encoding import (
    ZeroSets,
    distinct_records,
    inverse_one_hot,
    offsets,
    point_to_allowed,
    row_keys,
)


def strings(matrix: np.ndarray) -> list[str]:
    return ["".join("1" if b else "0" for b in row) for row in matrix]


def test_paper_example_3_1():
    # f1 in [[0, 40), [40, 100]], f2 in [[0, 30), [30, 60), [60, 100]]; f1 = 33.1, f2 = 44.7
    # is discretized as (1, 2) in the paper's 1-based numbering, i.e. codes (0, 1), and binarized
    # as 01 101.
    disc = Discretization(
        (FeatureBins("f1", NUMERIC, cuts=(40.0,)), FeatureBins("f2", NUMERIC, cuts=(30.0, 60.0)))
    )
    codes = disc.transform(pd.DataFrame({"f1": [33.1], "f2": [44.7]}))
    assert codes.tolist() == [[0, 1]]
    assert strings(inverse_one_hot(codes, disc.n_bins)) == ["01101"]


def test_inverse_one_hot_layout_and_missing_code():
    n_bins = np.array([3, 2])
    assert offsets(n_bins).tolist() == [0, 3]
    codes = np.array([[2, 0], [0, 1], [-1, 1], [1, -1]])
    # code -1 (no bin) gives an all-ones block: only rules leaving the feature free match
    assert strings(inverse_one_hot(codes, n_bins)) == ["11001", "01110", "11110", "10111"]


def test_point_to_allowed():
    assert point_to_allowed(np.array([1, 1, 0, 0, 1], bool)).tolist() == [
        False, False, True, True, False,
    ]  # fmt: skip


def test_zero_sets_from_bits_round_trip():
    bits = np.array([[1, 1, 0, 0, 1], [0, 1, 1, 1, 1], [1, 1, 1, 1, 1]], dtype=bool)
    zs = ZeroSets.from_bits(bits)
    assert zs.n_rows == 3
    assert zs.n_bits == 5
    assert zs.indptr.tolist() == [0, 2, 3, 3]
    assert zs.indices.tolist() == [2, 3, 0]
    assert zs.width is None  # rows have 2, 1 and 0 zeros
    np.testing.assert_array_equal(zs.to_bits(), bits)


def test_zero_sets_from_codes_matches_inverse_one_hot():
    n_bins = np.array([3, 2, 4])
    codes = np.array([[2, 0, 3], [0, 1, 0], [1, 1, 2]])
    zs = ZeroSets.from_codes(codes, n_bins)
    assert zs.width == 3
    assert zs.n_bits == 9
    assert zs.indices.tolist() == [2, 3, 8, 0, 4, 5, 1, 4, 7]
    np.testing.assert_array_equal(zs.to_bits(), inverse_one_hot(codes, n_bins))
    again = ZeroSets.from_bits(zs.to_bits())
    assert again.width == 3
    np.testing.assert_array_equal(again.indices, zs.indices)
    np.testing.assert_array_equal(again.indptr, zs.indptr)


def test_zero_sets_from_codes_refuses_minus_one():
    with pytest.raises(ValueError, match="codes must be >= 0"):
        ZeroSets.from_codes(np.array([[0, -1]]), np.array([2, 2]))


def test_zero_sets_from_bits_refuses_1d():
    with pytest.raises(ValueError, match="expected a 2-D bit matrix"):
        ZeroSets.from_bits(np.array([True, False]))


def test_zero_sets_row_queries_fixed_and_ragged_width():
    flags = np.array([0, 1, 1, 0, 0], dtype=bool)
    for bits in (
        np.array([[0, 1, 1, 0, 1], [1, 0, 1, 1, 0], [1, 1, 0, 1, 1]], dtype=bool),  # ragged
        np.array([[0, 1, 1, 1, 1], [1, 0, 1, 1, 1], [1, 1, 1, 1, 0]], dtype=bool),  # width 1
    ):
        zs = ZeroSets.from_bits(bits)
        expected_count = (~bits & flags).sum(axis=1)
        assert zs.count_per_row(flags).tolist() == expected_count.tolist()
        assert zs.any_per_row(flags).tolist() == (expected_count > 0).tolist()
        weights = np.array([1.0, 2.0, 4.0])
        assert zs.bit_weights(weights).tolist() == ((~bits) * weights[:, None]).sum(0).tolist()


def test_distinct_records_sums_weights_in_first_occurrence_order():
    codes = np.array([[1, 0], [0, 0], [1, 0], [2, 1], [0, 0], [1, 0]])
    positive = np.array([1.0, 0.0, 0.0, 1.0, 0.0, 1.0])
    records = distinct_records(codes, np.array([3, 2]), positive, 1.0 - positive)
    assert records.n_rows == 3
    assert records.codes.tolist() == [[1, 0], [0, 0], [2, 1]]
    assert records.positive_weight.tolist() == [2.0, 0.0, 1.0]
    assert records.negative_weight.tolist() == [1.0, 2.0, 0.0]
    assert records.inverse.tolist() == [0, 1, 0, 2, 1, 0]
    np.testing.assert_array_equal(records.codes[records.inverse], codes)


def test_distinct_records_keeps_minus_one_codes_apart():
    codes = np.array([[-1, 0], [0, 0], [-1, 0], [0, -1]])
    w = np.ones(4)
    records = distinct_records(codes, np.array([2, 2]), w, 0 * w)
    assert records.codes.tolist() == [[-1, 0], [0, 0], [0, -1]]
    assert records.positive_weight.tolist() == [2.0, 1.0, 1.0]


def _equal_pairs(matrix):
    same = (matrix[:, None, :] == matrix[None, :, :]).all(axis=2)
    return same


def test_row_keys_equal_iff_rows_equal():
    rng = np.random.RandomState(0)
    n_bins = np.array([3, 1, 4, 2])
    codes = np.column_stack([rng.randint(-1, b, 200) for b in n_bins])
    keys = row_keys(codes, n_bins)
    np.testing.assert_array_equal(keys[:, None] == keys[None, :], _equal_pairs(codes))


def test_row_keys_with_many_columns_redensify_instead_of_overflowing():
    # 60 columns of 11 bins: the radix product 12^60 is far beyond int64, so the keys are
    # re-densified on the way. Rows differing only in the first or only in the last column,
    # and rows with -1 codes, must still get distinct keys.
    rng = np.random.RandomState(1)
    n_bins = np.full(60, 11)
    base = rng.randint(-1, 11, size=(40, 60))
    variants = [base]
    for column in (0, 30, 59):
        changed = base.copy()
        changed[:, column] = (changed[:, column] + 2) % 12 - 1
        variants.append(changed)
    codes = np.concatenate([*variants, base[:10]])  # and some exact duplicates
    keys = row_keys(codes, n_bins)
    assert keys.dtype == np.int64
    np.testing.assert_array_equal(keys[:, None] == keys[None, :], _equal_pairs(codes))
    records = distinct_records(codes, n_bins, np.ones(len(codes)), np.zeros(len(codes)))
    assert records.n_rows == len(np.unique(codes, axis=0))
    assert records.positive_weight.sum() == len(codes)


def test_row_keys_of_zero_rows():
    assert row_keys(np.zeros((0, 3), dtype=int), np.array([2, 2, 2])).shape == (0,)
