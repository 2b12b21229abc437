"""Stage tables: bin codes stored in a type wide enough for every bin, and read back exactly."""

import warnings

import numpy as np
import pandas as pd
import pytest

from libre_lib.discretization import CATEGORICAL, NUMERIC, Discretization, FeatureBins
from libre_lib.encoding import DistinctRecords
from libre_lib.errors import LibreWarning
from libre_lib.ops.artifacts import ArtifactStore
from libre_lib.ops.tables import code_dtype, records_from_table, records_table


def discretization(*n_categories: int) -> Discretization:
    return Discretization(
        tuple(
            FeatureBins(f"c{j}", CATEGORICAL, categories=tuple(range(n)))
            for j, n in enumerate(n_categories)
        )
    )


@pytest.mark.parametrize(
    ("bins", "dtype"),
    [((2,), np.uint8), ((256,), np.uint8), ((3, 257), np.uint16), ((65_537, 2), np.uint32)],
)
def test_codes_get_the_smallest_type_that_holds_every_bin(bins, dtype):
    assert code_dtype(discretization(*bins)) == dtype


def test_more_than_32767_categories_round_trip_through_the_store(tmp_path):
    """Codes were int16: category 32,768 and above wrapped to negative codes, and training
    failed in the weak learner with "codes must be >= 0"."""
    n = 40_000
    bins = discretization(n, 3)
    codes = np.column_stack([np.arange(n), np.arange(n) % 3]).astype(np.int32)
    records = DistinctRecords(
        codes=codes,
        positive_weight=np.ones(n),
        negative_weight=np.zeros(n),
        inverse=np.zeros(0, dtype=np.int64),
    )
    table, metadata = records_table(records, bins)
    assert str(table.schema.field("bin__c0").type) == "uint16"
    store = ArtifactStore(tmp_path)
    ref = store.write("encode", "k", table, metadata)
    again = records_from_table(store.read(ref), store.metadata(ref))
    np.testing.assert_array_equal(again.codes, codes)
    assert again.codes.min() >= 0


def test_a_numeric_feature_table_still_round_trips():
    bins = Discretization((FeatureBins("x", NUMERIC, cuts=(1.0, 2.0), has_missing=True),))
    codes = np.array([[0], [1], [2], [3]], dtype=np.int32)
    records = DistinctRecords(codes, np.ones(4), np.ones(4), np.zeros(0, dtype=np.int64))
    table, metadata = records_table(records, bins)
    assert str(table.schema.field("bin__x").type) == "uint8"
    np.testing.assert_array_equal(records_from_table(table, metadata).codes, codes)


def test_a_categorical_column_unique_per_row_is_named_in_a_warning():
    from libre_lib.discretization import fit_discretization

    n = 200
    frame = pd.DataFrame({"customer_id": [f"id{i}" for i in range(n)], "colour": ["r", "g"] * 100})
    positive = np.arange(n) % 2 == 0
    with pytest.warns(LibreWarning, match=r"'customer_id' has 200 distinct values in 200 rows"):
        fit_discretization(frame, positive, [True, True])
    with warnings.catch_warnings():
        warnings.simplefilter("error", LibreWarning)
        fit_discretization(frame[["colour"]], positive, [True])  # a real feature: no warning
        fit_discretization(frame.head(20), positive[:20], [True, True])  # too few rows to tell


def test_the_bins_table_has_a_row_per_category_of_a_grouped_bin():
    from libre_lib.ops.tables import discretization_from_metadata, discretization_table

    feature = FeatureBins(
        "zip", CATEGORICAL, categories=("a", "b", "c", "d"), has_missing=True, groups=(1, 0, 1, 0)
    )
    table, metadata = discretization_table(Discretization((feature,)))
    rows = table.to_pandas()
    assert rows["bin"].tolist() == [0, 0, 1, 1, 2]
    assert table.column("category").to_pylist() == ['"b"', '"d"', '"a"', '"c"', None]
    assert rows["missing"].tolist() == [False] * 4 + [True]
    assert discretization_from_metadata(metadata) == Discretization((feature,))
