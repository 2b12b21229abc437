"""The paper's appendix example ("THE BASE METHOD STEP BY STEP") end to end, module by module.

Eight records of CPU and MEM utilization, two of them failures (Label = 1). With CPU cut into
[0, 81), [81, 95), [95, max] and MEM into [0, 85), [85, max], LIBRE's base method finds the
boundary {110 00, 100 10} and the rule set

    IF CPU ∈ [95, max) OR CPU ∈ [81, max) and MEM ∈ [85, max) THEN Label = 1 ELSE Label = 0
"""

import numpy as np
import pandas as pd

from libre_lib import ensemble, selection
from libre_lib.discretization import NUMERIC, Discretization, FeatureBins
from libre_lib.encoding import distinct_records, inverse_one_hot
from libre_lib.rules import Condition, Interval, Rule, RuleSet, rules_from_points

INF = float("inf")

TABLE = pd.DataFrame(
    {
        "CPU": [95, 80, 81, 10, 10, 82, 85, 81],
        "MEM": [10, 10, 85, 85, 10, 10, 10, 10],
        "Label": [1, 0, 1, 0, 0, 0, 0, 0],
    },
    index=[f"t{i}" for i in range(1, 9)],
)
DISCRETIZATION = Discretization(
    (FeatureBins("CPU", NUMERIC, cuts=(81.0, 95.0)), FeatureBins("MEM", NUMERIC, cuts=(85.0,)))
)


def strings(matrix) -> list[str]:
    """Bit rows as the appendix writes them: "110 01" (3 CPU bits, 2 MEM bits)."""
    text = ["".join("1" if b else "0" for b in row) for row in matrix]
    return [f"{t[:3]} {t[3:]}" for t in text]


def test_appendix_example_end_to_end():
    features = TABLE[["CPU", "MEM"]]
    positive = TABLE["Label"].to_numpy() == 1
    n_bins = DISCRETIZATION.n_bins

    # Discretization: the columns r1, r2 of the appendix table (1-based there).
    codes = DISCRETIZATION.transform(features)
    assert (codes + 1).tolist() == [[3, 1], [1, 1], [2, 2], [1, 2], [1, 1], [2, 1], [2, 1], [2, 1]]
    # Binarization: the "String" column.
    assert strings(inverse_one_hot(codes, n_bins)) == [
        "110 01", "011 01", "101 10", "011 10", "011 01", "101 01", "101 01", "101 01",
    ]  # fmt: skip

    # Distinct records: t2 = t5 and t6 = t7 = t8 collapse, with their multiplicities.
    records = distinct_records(codes, n_bins, positive.astype(float), (~positive).astype(float))
    assert records.codes.tolist() == [[2, 0], [0, 0], [1, 1], [0, 1], [1, 0]]
    assert records.positive_weight.tolist() == [1, 0, 1, 0, 0]
    assert records.negative_weight.tolist() == [0, 2, 0, 1, 3]

    # One weak learner on both features: the boundary {110 00, 100 10}.
    candidates = ensemble.learn_subset(records, n_bins, [0, 1])
    assert strings(candidates.points) == ["110 00", "100 10"]
    # each point covers one failure and no negative
    assert candidates.positives.tolist() == [1.0, 1.0]
    assert candidates.negatives.tolist() == [0.0, 0.0]

    # Selection: both are kept (equal gain 0.7 and generality: input order).
    chosen = selection.select_rules(candidates, records, n_bins, alpha=0.7)
    assert chosen.indices.tolist() == [0, 1]
    assert [(s.positives, s.negatives) for s in chosen.stats] == [(1.0, 0.0), (1.0, 0.0)]

    rules = rules_from_points(candidates.points[chosen.indices], DISCRETIZATION)
    assert rules == [
        Rule((Condition("CPU", NUMERIC, intervals=(Interval(95.0, INF),)),)),
        Rule(
            (
                Condition("CPU", NUMERIC, intervals=(Interval(81.0, INF),)),
                Condition("MEM", NUMERIC, intervals=(Interval(85.0, INF),)),
            )
        ),
    ]
    assert [str(r) for r in rules] == ["CPU ∈ [95, max]", "CPU ∈ [81, max] AND MEM ∈ [85, max]"]

    # The rules evaluated on the raw table reproduce the labels.
    ruleset = RuleSet(tuple(rules), target="Label", positive_class=1, negative_class=0)
    assert ruleset.fired(features).any(axis=1).tolist() == positive.tolist()
    assert str(ruleset).splitlines() == [
        "IF CPU ∈ [95, max]",
        "OR CPU ∈ [81, max] AND MEM ∈ [85, max]",
        "THEN Label = 1 ELSE Label = 0",
    ]


def test_appendix_example_with_a_second_learner_on_cpu_alone():
    # On CPU alone, t3 (CPU bin 2) is indistinguishable from the negatives t6-t8: a
    # contradiction. Seed t1 = 110 gives 110 (both flips conflict); seed t3 = 101 keeps bit 1
    # (t2 = 011 is at distance 1) and flips bit 3 (no negative has a 0 there), giving 100,
    # which covers the negatives identical to t3 (tolerated) and evicts the less general 110.
    features = TABLE[["CPU", "MEM"]]
    positive = TABLE["Label"].to_numpy() == 1
    n_bins = DISCRETIZATION.n_bins
    records = distinct_records(
        DISCRETIZATION.transform(features), n_bins, positive.astype(float), (~positive) * 1.0
    )
    cpu_only = ensemble.learn_subset(records, n_bins, [0])
    assert strings(cpu_only.points) == ["100 00"]
    assert (cpu_only.positives.tolist(), cpu_only.negatives.tolist()) == ([2.0], [3.0])

    # The ensemble unions both learners in order of first appearance ...
    union = ensemble.fit_ensemble(records, n_bins, [(0, 1), (0,)])
    assert strings(union.points) == ["110 00", "100 10", "100 00"]
    assert union.positives.tolist() == [1.0, 1.0, 2.0]
    assert union.negatives.tolist() == [0.0, 0.0, 3.0]
    threaded = ensemble.fit_ensemble(records, n_bins, [(0, 1), (0,)], n_jobs=2)
    np.testing.assert_array_equal(threaded.points, union.points)
    # a learner run twice adds nothing to the union
    again = ensemble.fit_ensemble(records, n_bins, [(0, 1), (0,), (0, 1)])
    np.testing.assert_array_equal(again.points, union.points)

    # ... and selection still ends with the paper's two rules: "CPU ∈ [81, max]" covers both
    # failures but also t6-t8 (gain 0.7 * 2 - 0.3 * 3 = 0.5 < 0.7 for either exact rule).
    chosen = selection.select_rules(union, records, n_bins, alpha=0.7)
    assert chosen.indices.tolist() == [0, 1]
    assert chosen.n_candidates == 3
    assert chosen.n_filtered == 3
