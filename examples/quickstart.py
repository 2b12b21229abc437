"""Train a LIBRE rule set on a bundled dataset and print the rules and holdout metrics.

python examples/quickstart.py [dataset]      # default: pima
"""

from __future__ import annotations

import sys
import time

from sklearn.metrics import f1_score, precision_score, recall_score
from sklearn.model_selection import train_test_split

from libre_lib import LibreClassifier
from libre_lib.datasets import dataset_names, load_dataset


def main(name: str = "pima") -> None:
    if name.replace("-", "_") not in dataset_names():
        raise SystemExit(f"unknown dataset {name!r}; choose one of {', '.join(dataset_names())}")
    X, y, info = load_dataset(name)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.25, stratify=y, random_state=0
    )
    clf = LibreClassifier(positive_class=info.positive_class, random_state=0)
    start = time.perf_counter()
    clf.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    truth = y_test == info.positive_class
    pred = clf.predict(X_test) == info.positive_class
    print(f"LIBRE on {name}: {len(X_train)} training rows, fitted in {seconds:.2f} s\n")
    print(clf.rules_)
    print(
        f"\nholdout ({len(X_test)} rows): F1 {f1_score(truth, pred):.3f}  "
        f"precision {precision_score(truth, pred, zero_division=0):.3f}  "
        f"recall {recall_score(truth, pred):.3f}  "
        f"rules {len(clf.rules_)}  atoms/rule {clf.rules_.n_atoms:.1f}"
    )
    print("\nSQL for scoring in a database:\n" + clf.to_sql())


if __name__ == "__main__":
    main(*sys.argv[1:2])
