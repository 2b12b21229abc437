"""Bundled benchmark datasets (UCI Machine Learning Repository, CC BY 4.0; see README.md here).

>>> from libre_lib.datasets import load_dataset
>>> X, y, info = load_dataset("pima")
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pandas as pd

from ..errors import ParameterError

DATA_DIR = Path(__file__).resolve().parent


@cache
def manifest() -> dict:
    return json.loads((DATA_DIR / "MANIFEST.json").read_text(encoding="utf-8"))


def dataset_names() -> list[str]:
    return list(manifest()["datasets"])


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    path: Path
    positive_class: object
    categorical_columns: tuple[str, ...]
    n_rows: int


def dataset_info(name: str) -> DatasetInfo:
    """A bundled dataset's facts; ``credit-approval`` (the pipeline's spelling) names
    ``credit_approval`` too."""
    entries = manifest()["datasets"]
    if name not in entries and isinstance(name, str) and name.replace("-", "_") in entries:
        name = name.replace("-", "_")
    if name not in entries:
        raise ParameterError(f"Unknown dataset {name!r}. Bundled datasets: {sorted(entries)}.")
    entry = entries[name]
    return DatasetInfo(
        name=name,
        path=DATA_DIR / entry["file"],
        positive_class=entry["positive_class"],
        categorical_columns=tuple(entry["categorical_columns"]),
        n_rows=int(entry["n_rows"]),
    )


def load_dataset(name: str) -> tuple[pd.DataFrame, pd.Series, DatasetInfo]:
    """Features (categorical columns as strings, missing values as NaN), target labels as
    strings, and the dataset's facts (positive class, categorical columns)."""
    info = dataset_info(name)
    dtypes = {c: "string" for c in info.categorical_columns}
    dtypes["target"] = "string"
    frame = pd.read_csv(info.path, dtype=dtypes, keep_default_na=False, na_values=[""])
    for column in info.categorical_columns:
        frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    y = frame.pop("target").astype(object)
    return frame, y, info
