"""Rule fingerprints on the bundled datasets: a refactoring that must not change behaviour
prints the same lines before and after.

    python benchmarks/fingerprints.py [--search] > fingerprints.txt

Each line: dataset, number of rules, sha256 (first 16 hex digits) of the rule set's text, for
``LibreClassifier(random_state=0)`` and, with ``--search``, ``LibreSearchCV(random_state=0)``
on the small datasets (fewer than 2,000 rows).
"""

from __future__ import annotations

import argparse
import hashlib
import warnings

from libre_lib import LibreClassifier, LibreSearchCV
from libre_lib.datasets import dataset_names, load_dataset


def fingerprint(model) -> str:
    text = str(model.rules_)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--search", action="store_true", help="also LibreSearchCV (small data)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    for name in dataset_names():
        X, y, info = load_dataset(name)
        model = LibreClassifier(positive_class=info.positive_class, random_state=0).fit(X, y)
        line = f"{name:16s} classifier {len(model.rules_):3d} rules {fingerprint(model)}"
        print(line, flush=True)
        if args.search and len(X) < 2000:
            search = LibreSearchCV(positive_class=info.positive_class, random_state=0, n_jobs=1)
            search.fit(X, y)
            best = search.best_estimator_
            print(f"{name:16s} search     {len(best.rules_):3d} rules {fingerprint(best)}",
                  flush=True)


if __name__ == "__main__":
    main()
