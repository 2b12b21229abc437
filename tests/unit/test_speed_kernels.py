"""The compiled kernels give exactly what the step-by-step numpy code gives.

The weak learner runs compiled unless a trace is asked for, so a trace-less call and a traced
call of ``find_boundary`` compare the two implementations; the coverage counts and ChiMerge's
value counting are compared with the plain numpy formulations they replaced.
"""

import numpy as np
import pytest

from libre_lib import ensemble
from libre_lib.discretization import _value_counts
from libre_lib.encoding import ZeroSets, distinct_records
from libre_lib.ensemble import covered_counts
from libre_lib.weak_learner import boundary as weak_learner
from libre_lib.weak_learner import cells, find_boundary


def both(pos, neg, weight, heuristic, seeds):
    compiled = find_boundary(pos, neg, weight, heuristic, seeds)
    stepwise = find_boundary(pos, neg, weight, heuristic, seeds, trace=[])
    return compiled, stepwise


def one_hot_problem(rng, n, n_bins, positive_rate=0.5):
    codes = np.column_stack([rng.randint(0, b, size=n) for b in n_bins])
    positive = rng.rand(n) < positive_rate
    records = distinct_records(codes, n_bins, positive.astype(float), (~positive).astype(float))
    is_pos, is_neg = records.positive_weight > 0, records.negative_weight > 0
    return (
        ZeroSets.from_codes(records.codes[is_pos], n_bins),
        ZeroSets.from_codes(records.codes[is_neg], n_bins),
        records.positive_weight[is_pos],
    )


@pytest.mark.parametrize("heuristic", ["H1", "H2"])
@pytest.mark.parametrize("seeds", ["uncovered", "all"])
def test_compiled_learner_matches_numpy_on_inverse_one_hot_codes(heuristic, seeds):
    # Small integer weights give many ties in (|S0|, |D+0|): H1's groups of ties are decided
    # by the distances, the lazy path's hardest case.
    rng = np.random.RandomState(11)
    for n, n_bins in [(60, np.array([3, 2, 4])), (400, np.array([4, 3, 5, 2, 3])), (900, [6] * 4)]:
        pos, neg, weight = one_hot_problem(rng, n, np.asarray(n_bins))
        compiled, stepwise = both(pos, neg, weight, heuristic, seeds)
        assert compiled.shape[0] > 0
        np.testing.assert_array_equal(compiled, stepwise)


@pytest.mark.parametrize("heuristic", ["H1", "H2"])
@pytest.mark.parametrize("seeds", ["uncovered", "all"])
def test_compiled_learner_matches_numpy_on_bit_matrices(heuristic, seeds):
    # Arbitrary bit matrices (rows with any number of zeros, 70 bits: two packed words).
    rng = np.random.RandomState(5)
    for n_bits, density in [(9, 0.5), (70, 0.8)]:
        pos = rng.rand(50, n_bits) < density
        neg = rng.rand(80, n_bits) < density
        weight = rng.randint(1, 4, size=50).astype(float)
        compiled, stepwise = both(pos, neg, weight, heuristic, seeds)
        np.testing.assert_array_equal(compiled, stepwise)


def test_compiled_learner_with_imbalanced_classes():
    rng = np.random.RandomState(2)
    pos, neg, weight = one_hot_problem(rng, 3000, np.array([5, 4, 6, 3]), positive_rate=0.05)
    for heuristic in ("H1", "H2"):
        compiled, stepwise = both(pos, neg, weight, heuristic, "uncovered")
        np.testing.assert_array_equal(compiled, stepwise)


def generic(pos, neg, weight, monkeypatch):
    """The generic compiled kernel, bypassing the cell-key one."""
    with monkeypatch.context() as patch:
        patch.setattr(weak_learner, "_cell_radix", lambda *_: None)
        return find_boundary(pos, neg, weight, "H1", "uncovered")


@pytest.mark.parametrize(
    ("n", "n_bins", "rate"),
    [
        (20000, [8] * 10, 0.5),  # sparse grid: long searches, few pruned runs
        (20000, [3] * 10, 0.5),  # dense grid: directory levels cover most digits
        (8000, [2, 9, 1, 4, 3, 7], 0.2),  # a one-bin feature, unequal bins, imbalance
        (3000, [5] * 4, 0.9),  # few negatives
        (4000, [40, 30], 0.5),  # two wide features
    ],
)
def test_cell_kernel_matches_the_generic_kernel(n, n_bins, rate, monkeypatch):
    rng = np.random.RandomState(n % 97)
    pos, neg, weight = one_hot_problem(rng, n, np.asarray(n_bins), positive_rate=rate)
    # integer weights in few values: many ties of the H1 keys, decided by distances
    weight = np.minimum(weight, 2.0)
    cells = find_boundary(pos, neg, weight, "H1", "uncovered")
    assert cells.shape[0] > 0
    np.testing.assert_array_equal(cells, generic(pos, neg, weight, monkeypatch))


def test_cell_kernel_with_duplicate_positive_cells_and_no_negatives(monkeypatch):
    n_bins = np.array([3, 4, 2])
    codes = np.array([[0, 1, 1], [0, 1, 1], [2, 3, 0], [1, 0, 1]])
    pos = ZeroSets.from_codes(codes, n_bins)
    no_neg = ZeroSets.from_codes(np.zeros((0, 3), dtype=int), n_bins)
    weight = np.array([1.0, 2.0, 1.0, 1.0])
    assert find_boundary(pos, no_neg, weight).shape[0] == 0  # everything allowed: no rule
    neg = ZeroSets.from_codes(np.array([[0, 1, 0], [2, 2, 0]]), n_bins)
    np.testing.assert_array_equal(
        find_boundary(pos, neg, weight), generic(pos, neg, weight, monkeypatch)
    )


@pytest.mark.parametrize("cells", [True, False], ids=["cell-key search", "bin scan"])
def test_covered_counts_kernel_matches_the_dense_comparison(cells, monkeypatch):
    if not cells:
        monkeypatch.setattr(ensemble, "cell_layout", lambda *_: None)
    rng = np.random.RandomState(4)
    n_bins = np.array([3, 4, 2, 5])
    codes = np.unique(np.column_stack([rng.randint(0, b, 300) for b in n_bins]), axis=0)
    records = ZeroSets.from_codes(codes, n_bins)
    points = rng.rand(40, int(n_bins.sum())) < 0.3
    wp, wn = rng.randint(0, 5, len(codes)).astype(float), rng.randint(0, 5, len(codes)) * 1.0
    got = covered_counts(points, records, wp, wn)
    bits = records.to_bits()
    covered = ~(points[:, None, :] & ~bits[None, :, :]).any(axis=2)
    np.testing.assert_array_equal(got[0], covered @ wp)
    np.testing.assert_array_equal(got[1], covered @ wn)


def test_value_counts_matches_unique():
    rng = np.random.RandomState(8)
    values = np.round(rng.normal(size=2000), 1)
    values[:5] = [0.0, -0.0, np.inf, -np.inf, 0.0]
    positive = rng.rand(2000) < 0.3
    distinct, counts = _value_counts(values, positive)
    expected, inverse = np.unique(values, return_inverse=True)
    np.testing.assert_array_equal(distinct, expected)
    np.testing.assert_array_equal(counts[:, 1], np.bincount(inverse, weights=positive))
    np.testing.assert_array_equal(counts[:, 0], np.bincount(inverse, weights=~positive))


@pytest.mark.parametrize("tolerance", [0.0, 0.3])
def test_cell_kernel_coverage_equals_covered_counts(tolerance):
    # the cell-key kernel reports each point's coverage itself (positives in its box, the
    # seed cell's negatives, and what the tolerance let in); it must equal a recount
    rng = np.random.RandomState(21)
    n_bins = np.array([4, 6, 3, 5])
    codes = np.column_stack([rng.randint(0, b, 6000) for b in n_bins])
    label = (codes[:, 0] >= 2) ^ (rng.rand(6000) < 0.2)
    records = distinct_records(codes, n_bins, label * 1.0, (~label) * 1.0)
    is_pos, is_neg = records.positive_weight > 0, records.negative_weight > 0
    points, pos, neg = weak_learner.find_boundary_with_coverage(
        ZeroSets.from_codes(records.codes[is_pos], n_bins),
        ZeroSets.from_codes(records.codes[is_neg], n_bins),
        records.positive_weight[is_pos],
        conflict_tolerance=tolerance,
        negative_weight=records.negative_weight[is_neg],
    )
    assert pos is not None and points.shape[0] > 0
    expected = covered_counts(
        points,
        ZeroSets.from_codes(records.codes, n_bins),
        records.positive_weight,
        records.negative_weight,
    )
    np.testing.assert_array_equal(pos, expected[0])
    np.testing.assert_array_equal(neg, expected[1])


def test_one_hot_rows_and_popcount():
    rng = np.random.RandomState(11)
    n_bins = np.array([70, 1, 5, 64, 3])  # 143 bits: three words, features across words
    blocks = np.concatenate(([0], np.cumsum(n_bins)))
    codes = np.column_stack([rng.randint(0, b, 200) for b in n_bins])
    expected = np.zeros((200, blocks[-1]), dtype=np.uint8)
    for f in range(n_bins.size):
        expected[np.arange(200), blocks[f] + codes[:, f]] = 1
    for levels in (0, 2):  # rotated: the bits of the first ``levels`` features come last
        words = cells.one_hot(codes, blocks, levels)
        assert words.shape == (3, 200) and words.dtype == np.uint64
        rows = np.ascontiguousarray(words.T).view(np.uint8)
        unpacked = np.unpackbits(rows, axis=1, bitorder="little")[:, : blocks[-1]]
        np.testing.assert_array_equal(unpacked, np.roll(expected, -blocks[levels], axis=1))
    values = rng.randint(0, 2**63 - 1, 500, dtype=np.int64).astype(np.uint64) * np.uint64(3)
    for x in [*values, np.uint64(0), np.uint64(2**64 - 1), np.uint64(1) << np.uint64(63)]:
        assert cells._popcount(x) == bin(int(x)).count("1")


@pytest.mark.parametrize(("n", "n_bins"), [(300, [3, 2, 4, 2]), (50, [5, 5, 5]), (20, [2, 2])])
def test_every_bits_directory_equals_the_one_computed_bit_by_bit(n, n_bins):
    rng = np.random.RandomState(n)
    blocks = np.concatenate(([0], np.cumsum(n_bins))).astype(np.int64)
    radix = cells.cell_layout(blocks)
    codes = np.column_stack([rng.randint(0, b, size=n) for b in n_bins]).astype(np.int32)
    for levels in range(len(n_bins)):
        ptr, _, keys, _, directories, _ = cells.sorted_runs(codes, blocks, radix, levels)
        one_by_one = np.stack(
            [
                cells._directory(keys[ptr[b] : ptr[b + 1]], ptr[b], radix, blocks, levels)
                for b in range(ptr.size - 1)
            ]
        )
        np.testing.assert_array_equal(directories, one_by_one)
        assert directories.dtype == np.int64
