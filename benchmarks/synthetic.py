"""The synthetic data of the benchmarks: uniform numbers, a learnable label, and optionally the
mess of real tables (categorical columns, missing cells).

    python benchmarks/synthetic.py data.parquet --rows 1000000 --seed 0
    python benchmarks/synthetic.py data.parquet --rows 1000000 --plain   # numbers only
    python benchmarks/synthetic.py --bayes                                # Bayes-optimal F1

Columns ``x0 .. x9`` are uniform in [0, 100]. The learnable label is
``(x0 >= 50 AND x1 < 30) OR x2 >= 90`` computed on the true values, with 5 % of the labels
flipped (``noise``). With ``messy=True`` (the CLI's default) two categorical columns are added,
both **irrelevant** to the label, so any rule testing them is noise: ``c3`` with 3 levels and
``c20`` with 20 levels (uniform over the levels), and then 1 % of the cells of every feature
column (numbers and categories) are set missing, at random and independently of the label
(missing completely at random). The label stays computed on the true values, so a missing
``x0``, ``x1`` or ``x2`` hides part of what decides it.

``make_frame(..., messy=False)`` draws exactly what ``benchmarks/scalability.py`` always drew
(it calls this module), so its tables are unchanged; the messy columns are drawn after, from the
same generator.

Bayes-optimal F1 (:func:`bayes_f1`): the posterior ``P(y = 1 | observed cells)`` is
``noise + (1 - 2 noise) P(concept | observed)``, where each missing one of ``x0 >= 50``,
``x1 < 30``, ``x2 >= 90`` is replaced by its probability (0.5, 0.3, 0.1; the features are
independent); the F1-optimal classifier predicts positive above a threshold of that posterior,
the best one found on fresh rows. Without missing cells the optimum is the concept itself:
F1 = 2 * .235 * .95 / (.235 + .2615) = 0.8993.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

#: The label's parts: x0 >= 50, x1 < 30, x2 >= 90, and their probabilities.
P_A, P_B, P_C = 0.5, 0.3, 0.1
CATEGORICAL_LEVELS = {"c3": 3, "c20": 20}


def make_frame(
    n: int,
    features: int = 10,
    label: str = "learnable",
    positive_rate: float = 0.5,
    seed: int = 0,
    messy: bool = False,
    missing: float = 0.01,
    noise: float = 0.05,
):
    """Synthetic rows and their labels.

    Parameters
    ----------
    n : int
        Rows.
    features : int, default=10
        Numeric columns ``x0 ..``, uniform in [0, 100] (at least 3 for the learnable label).
    label : {"learnable", "random"}, default="learnable"
        "learnable": ``(x0 >= 50 AND x1 < 30) OR x2 >= 90`` with ``noise`` of the labels
        flipped; "random": positive with probability ``positive_rate``, no signal.
    positive_rate : float, default=0.5
        Positive rate of the random label.
    seed : int, default=0
        Seed of ``numpy.random.default_rng``; the same arguments give the same rows.
    messy : bool, default=False
        Add the irrelevant categorical columns ``c3`` and ``c20`` and set ``missing`` of the
        cells of every feature column missing (NaN for numbers, None for categories).
    missing : float, default=0.01
        Share of missing cells per feature column (``messy`` only).
    noise : float, default=0.05
        Share of flipped labels (learnable label only).

    Returns
    -------
    frame : DataFrame
        The feature columns.
    y : ndarray of bool
        The labels.
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 100.0, size=(n, features))
    if label == "random":
        y = rng.random(n) < positive_rate
    elif label == "learnable":
        y = ((X[:, 0] >= 50) & (X[:, 1] < 30)) | (X[:, 2] >= 90)
        y ^= rng.random(n) < noise
    else:
        raise ValueError(f"unknown label {label!r}")
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(features)])
    if messy:
        for name, levels in CATEGORICAL_LEVELS.items():
            names = np.array([f"{name}_{k:02d}" for k in range(levels)], dtype=object)
            frame[name] = names[rng.integers(0, levels, size=n)]
        for name in frame.columns:
            hole = rng.random(n) < missing
            column = frame[name].to_numpy(copy=True)
            column[hole] = np.nan if column.dtype.kind == "f" else None
            frame[name] = column
    return frame, y


def posterior(frame, noise: float = 0.05) -> np.ndarray:
    """``P(y = 1 | the observed cells)`` of the learnable label, per row (see module doc)."""
    x0, x1, x2 = (frame[f"x{j}"].to_numpy(dtype=float) for j in range(3))
    a = np.where(np.isnan(x0), P_A, x0 >= 50)
    b = np.where(np.isnan(x1), P_B, x1 < 30)
    c = np.where(np.isnan(x2), P_C, x2 >= 90)
    concept = 1.0 - (1.0 - a * b) * (1.0 - c)
    return noise + (1.0 - 2.0 * noise) * concept


def f1(truth: np.ndarray, pred: np.ndarray) -> float:
    """F1 of the positive class from two bool arrays."""
    tp = float(np.sum(truth & pred))
    total = float(truth.sum() + pred.sum())
    return 2.0 * tp / total if total else 0.0


def bayes_f1(messy: bool, n: int = 2_000_000, seed: int = 12345, noise: float = 0.05) -> float:
    """F1 of the Bayes-optimal classifier (the best threshold on the posterior) on ``n`` fresh
    rows of ``make_frame(messy=messy)``."""
    frame, y = make_frame(n, seed=seed, messy=messy, noise=noise)
    p = posterior(frame, noise)
    return max(f1(y, p >= t) for t in np.unique(p))


def write_parquet(path: Path, frame, y, label: str = "label") -> None:
    """The rows and their label (0/1) as one Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame.assign(**{label: y.astype(np.int8)}), preserve_index=False)
    pq.write_table(table, path, row_group_size=1 << 20)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", nargs="?", type=Path, help="Parquet file to write")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plain", action="store_true", help="no categorical or missing cells")
    parser.add_argument("--missing", type=float, default=0.01)
    parser.add_argument("--bayes", action="store_true", help="print the Bayes-optimal F1")
    args = parser.parse_args()
    if args.bayes:
        for messy in (False, True):
            print(f"messy={messy}: Bayes-optimal F1 {bayes_f1(messy):.4f}")
    if args.path is not None:
        frame, y = make_frame(args.rows, seed=args.seed, messy=not args.plain,
                              missing=args.missing)  # fmt: skip
        write_parquet(args.path, frame, y)
        print(f"wrote {args.path} ({args.rows:,} rows, {frame.shape[1]} features + label)")


if __name__ == "__main__":
    main()
