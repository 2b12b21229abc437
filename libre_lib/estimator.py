"""``LibreClassifier``: the scikit-learn estimator wrapping the whole LIBRE method."""

from __future__ import annotations

import json
import logging
import numbers
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, check_random_state

from ._version import __version__
from .discretization import Discretization, fit_discretization
from .encoding import DistinctRecords, distinct_records
from .ensemble import Candidates, draw_feature_subsets, fit_ensemble
from .errors import DataError, LibreWarning, ModelFormatError, SchemaError
from .inputs import Target, as_frame, binary_target, label_array, resolve_categorical
from .params import validate_params
from .render import rule_from_dict, rule_to_dict, ruleset_sql
from .rules import RuleSet, rules_from_points
from .selection import Selection, select_rules

logger = logging.getLogger(__name__)

MODEL_FORMAT = "libre-flows/model"
MODEL_FORMAT_VERSION = 1


def libre_tags(tags):
    """scikit-learn tags of LIBRE estimators: raw DataFrames with strings, categories and NaN;
    binary only."""
    tags.input_tags.allow_nan = True
    tags.input_tags.string = True
    tags.input_tags.categorical = True
    tags.classifier_tags.multi_class = False
    tags.classifier_tags.poor_score = True
    return tags


class LibreClassifier(ClassifierMixin, BaseEstimator):
    """Learn a small set of IF-THEN rules for one positive class (LIBRE, Mita et al. 2020).

    ``fit`` checks the parameters against :data:`libre_lib.params.LIBRE_PARAMETERS`.

    Parameters
    ----------
    n_estimators : int in [1, 100000], default=50
        Weak learners, each on a random subset of features (section 3.2). Repeated subsets
        are run once.
    max_features : int, float or None, default=5
        Largest feature subset of a learner: a count, a fraction of the usable features, or
        all of them. See ``subset_sizes``.
    subset_sizes : {"cycle", "fixed"}, default="cycle"
        "cycle": subset sizes cycle from ``max_features`` down to 1 (the paper's learners use
        "up to 5 features"), mixing short general rules with longer specific ones; "fixed":
        every learner gets ``max_features`` features (needed when the concept spans that many
        features jointly, as tic-tac-toe's lines do).
    heuristic : {"H1", "H2"}, default="H1"
        Bit-selection heuristic of FindBoundaryPoint (section 3.1): H1 favours fewer rules,
        H2 shorter ones.
    alpha : float in [0, 1], default=0.7
        Weight of new positives against new negatives in the weighted set cover (section 3.3).
    chi2_threshold : float >= 0, default=4.6
        ChiMerge threshold: adjacent intervals whose chi-square is below it are merged.
    max_intervals : int or None, default=3
        Cap on the intervals per numeric feature (merging continues past the threshold).
    top_k : int or None, default=200
        Candidates kept after the local-support filter, ranked by exclusiveness.
    max_rules : int or None, default=None
        Cap on the number of rules ("LIBRE 3" in the paper is ``max_rules=3``).
    min_local_support : float in [0, 1], default=0.05
        Minimum fraction of the positives a candidate rule must cover.
    seeds : {"uncovered", "all"}, default="uncovered"
        "uncovered": only positives not yet covered seed new boundary points (the paper's
        Algorithm 1); "all": every distinct positive seeds one (the authors' code).
    conflict_tolerance : float >= 0, default=0.0
        0 is the paper's learner: a boundary point covers no training negative of its
        learner's projection (records identical to its seed aside). With a value > 0 (not in
        the paper) a learner may keep generalizing while the negatives its point covers weigh
        at most ``conflict_tolerance`` times the positives it covers: fewer, more general rules
        on large noisy data. Needs ``heuristic="H1"`` and ``seeds="uncovered"``.
    positive_class : label or None, default=None
        The class the rules describe. Default: 1 or True if present, else the minority class.
        With more than two classes it is required and the rest form the negative class.
    categorical_features : list of names/indices, bool mask or None, default=None
        Columns to treat as categorical on top of those with non-numeric dtypes.
    random_state : int in [0, 2**32 - 1], RandomState or None, default=None
        Seeds the feature subsets; the same seed and data give identical rules.
    n_jobs : int or None, default=None
        Learners run in this many threads (-1: all cores).

    Attributes
    ----------
    rules_ : RuleSet
        The selected rules in selection order; ``str(rules_)`` is the paper-style text.
    classes_ : ndarray of shape (2,)
        ``[negative label, positive label]``.
    discretization_ : Discretization
        The bins of every used column (cut points, categories, missing bins).
    feature_subsets_ : list of tuple
        Column indices (into ``discretization_.features``) of each learner.
    n_candidates_ : int
        Size of the union of the learners' boundary points.
    """

    def __init__(
        self,
        n_estimators=50,
        max_features=5,
        subset_sizes="cycle",
        heuristic="H1",
        alpha=0.7,
        chi2_threshold=4.6,
        max_intervals=3,
        top_k=200,
        max_rules=None,
        min_local_support=0.05,
        seeds="uncovered",
        conflict_tolerance=0.0,
        positive_class=None,
        categorical_features=None,
        random_state=None,
        n_jobs=None,
    ):
        self.n_estimators = n_estimators
        self.max_features = max_features
        self.subset_sizes = subset_sizes
        self.heuristic = heuristic
        self.alpha = alpha
        self.chi2_threshold = chi2_threshold
        self.max_intervals = max_intervals
        self.top_k = top_k
        self.max_rules = max_rules
        self.min_local_support = min_local_support
        self.seeds = seeds
        self.conflict_tolerance = conflict_tolerance
        self.positive_class = positive_class
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.n_jobs = n_jobs

    # -- scikit-learn plumbing ----------------------------------------------------------------

    def __sklearn_tags__(self):
        return libre_tags(super().__sklearn_tags__())

    def _check_params(self) -> None:
        validate_params(self.get_params(deep=False), owner=type(self).__name__)

    # -- fitting ------------------------------------------------------------------------------

    def fit(self, X, y):
        """Learn the rule set from ``X`` (DataFrame or array; numbers, strings, NaN) and ``y``.

        The stages below are public so a pipeline can run (and cache) them one by one:
        :meth:`discretize` → :meth:`encode` → :meth:`draw_subsets` → :func:`learn_subset` per
        subset → :func:`union_candidates` → :meth:`select` → :meth:`assemble`.
        """
        self._check_params()
        started = time.perf_counter()
        frame = as_frame(X)
        target = binary_target(y, self.positive_class, n_rows=frame.shape[0])
        discretization = self.discretize(frame, target)
        records = self.encode(frame, target, discretization)
        subsets = self.draw_subsets(discretization)
        n_bins = discretization.n_bins
        candidates = fit_ensemble(
            records,
            n_bins,
            subsets,
            self.heuristic,
            self.seeds,
            self.n_jobs,
            self.conflict_tolerance,
        )
        selection = self.select(candidates, records, discretization)
        self.assemble(
            frame.columns,
            target,
            discretization,
            subsets,
            candidates,
            selection,
            target_name=_target_name(y),
            feature_names=isinstance(X, pd.DataFrame)
            and all(isinstance(c, str) for c in X.columns),
        )
        logger.info(
            "%d learners gave %d candidate rules; %d passed the filter, %d selected (%.2f s)",
            len(subsets),
            len(candidates),
            selection.n_filtered,
            selection.indices.size,
            time.perf_counter() - started,
        )
        return self

    # -- the stages of fit --------------------------------------------------------------------

    def discretize(self, frame: pd.DataFrame, target: Target) -> Discretization:
        """ChiMerge / category bins of every column (constant columns dropped with a warning)."""
        self._check_params()
        discretization = fit_discretization(
            frame,
            target.positive,
            resolve_categorical(frame, self.categorical_features),
            chi2_threshold=float(self.chi2_threshold),
            max_intervals=self.max_intervals,
        )
        if not discretization.features:
            raise DataError("No usable feature: every column of X is constant or entirely missing.")
        return discretization

    @staticmethod
    def encode(
        frame: pd.DataFrame, target: Target, discretization: Discretization
    ) -> DistinctRecords:
        """Bin codes of the training rows, collapsed to distinct records with class weights."""
        codes = discretization.transform(frame)
        records = distinct_records(
            codes,
            discretization.n_bins,
            target.positive.astype(float),
            (~target.positive).astype(float),
        )
        logger.info(
            "discretized %d columns into %d bins (%d dropped); %d distinct records",
            len(discretization.features),
            int(discretization.n_bins.sum()),
            len(discretization.dropped),
            records.n_rows,
        )
        return records

    def draw_subsets(self, discretization: Discretization) -> list[tuple[int, ...]]:
        """The learners' feature subsets, fixed up front from ``random_state``."""
        pool = [j for j, b in enumerate(discretization.n_bins) if b >= 2]
        if not pool:
            return []
        rng = check_random_state(self.random_state)
        return draw_feature_subsets(
            pool, self.n_estimators, self._n_features(len(pool)), rng, self.subset_sizes
        )

    def select(
        self, candidates: Candidates, records: DistinctRecords, discretization: Discretization
    ) -> Selection:
        """Local-support filter, top-K and weighted set cover (section 3.3)."""
        return select_rules(
            candidates,
            records,
            discretization.n_bins,
            alpha=float(self.alpha),
            top_k=self.top_k,
            max_rules=self.max_rules,
            min_local_support=float(self.min_local_support),
        )

    def assemble(
        self,
        columns,
        target: Target,
        discretization: Discretization,
        subsets,
        candidates: Candidates,
        selection: Selection,
        target_name: str = "y",
        feature_names: bool = True,
    ) -> LibreClassifier:
        """Set the fitted state from the stages' outputs; returns ``self``."""
        self.columns_ = [str(c) for c in columns]
        self.n_features_in_ = len(self.columns_)
        if feature_names:
            self.feature_names_in_ = np.asarray(self.columns_, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.classes_ = target.classes
        self.positive_class_ = target.positive_class
        self.target_name_ = target_name
        self.discretization_ = discretization
        self.feature_subsets_ = [tuple(int(f) for f in s) for s in subsets]
        self.n_candidates_ = len(candidates)
        self.rules_ = RuleSet(
            tuple(rules_from_points(candidates.points[selection.indices], discretization)),
            target=target_name,
            positive_class=self.classes_[1],
            negative_class=self.classes_[0],
            stats=selection.stats,
        )
        if not len(self.rules_):
            warnings.warn(
                "No rule was learned: no candidate passed the local-support filter with a "
                "positive set-cover gain, so the model predicts the negative class everywhere. "
                "Try a higher alpha, a lower min_local_support or chi2_threshold, or more "
                "estimators.",
                LibreWarning,
                stacklevel=2,
            )
        return self

    def _n_features(self, n_usable: int) -> int:
        if self.max_features is None:
            return n_usable
        if isinstance(self.max_features, numbers.Integral):
            return min(int(self.max_features), n_usable)
        return max(1, round(self.max_features * n_usable))

    # -- prediction ---------------------------------------------------------------------------

    def _frame_for_predict(self, X) -> pd.DataFrame:
        check_is_fitted(self, "rules_")
        if isinstance(X, pd.DataFrame):
            frame = as_frame(X)
            expected = self.columns_
            if hasattr(self, "feature_names_in_") or list(frame.columns) != expected:
                missing = [c for c in expected if c not in frame.columns]
                extra = [c for c in frame.columns if c not in expected]
                if missing or extra:
                    if not hasattr(self, "feature_names_in_") and frame.shape[1] == len(expected):
                        return frame.set_axis(expected, axis=1)
                    raise SchemaError(
                        "X's columns differ from the columns seen in fit: "
                        f"missing {missing}, unexpected {extra}. Pass the same columns "
                        "(any order) as in fit."
                    )
                frame = frame[expected]
            return frame
        frame = as_frame(X, feature_names=None)
        if frame.shape[1] != self.n_features_in_:
            raise SchemaError(
                f"X has {frame.shape[1]} features, but LibreClassifier is expecting "
                f"{self.n_features_in_} features as input."
            )
        if hasattr(self, "feature_names_in_"):
            warnings.warn(
                "X does not have valid feature names, but LibreClassifier was fitted with "
                "feature names; columns are matched by position.",
                UserWarning,
                stacklevel=3,
            )
        return frame.set_axis(self.columns_, axis=1)

    def fired_rules(self, X) -> np.ndarray:
        """Bool matrix (rows x rules): which rule fires on which row."""
        frame = self._frame_for_predict(X)
        return self.rules_.fired(frame)

    def decision_function(self, X) -> np.ndarray:
        """Score of each row: the training precision of the most precise rule that fires on it,
        0 when no rule fires. Positive exactly when ``predict`` returns the positive class."""
        fired = self.fired_rules(X)
        precision = np.array([s.precision for s in self.rules_.stats], dtype=float)
        if not fired.shape[1]:
            return np.zeros(fired.shape[0])
        return np.where(fired, precision, 0.0).max(axis=1)

    def predict(self, X) -> np.ndarray:
        """The positive label where some rule fires, the negative label elsewhere."""
        fired = self.fired_rules(X)
        return self.classes_[fired.any(axis=1).astype(np.intp)]

    def explain(self, X) -> pd.DataFrame:
        """Per row: the prediction, the indices of the rules that fired and their text."""
        fired = self.fired_rules(X)
        texts = [str(r) for r in self.rules_]
        idx = [np.flatnonzero(row).tolist() for row in fired]
        index = X.index if isinstance(X, pd.DataFrame) else None
        return pd.DataFrame(
            {
                "prediction": self.classes_[fired.any(axis=1).astype(np.intp)],
                "rules": idx,
                "explanation": [" OR ".join(texts[i] for i in r) if r else "" for r in idx],
            },
            index=index,
        )

    # -- persistence --------------------------------------------------------------------------

    def to_sql(self) -> str:
        """The rule set as one boolean SQL expression over the training columns.

        Returns
        -------
        str
            TRUE where the model predicts the positive class (missing values follow the rules'
            ``∪ missing`` parts); see :func:`libre_lib.render.ruleset_sql`.
        """
        check_is_fitted(self, "rules_")
        return ruleset_sql(self.rules_)

    def to_dict(self) -> dict:
        """A JSON-ready description of the fitted model (format version 1)."""
        check_is_fitted(self, "rules_")
        return {
            "format": MODEL_FORMAT,
            "format_version": MODEL_FORMAT_VERSION,
            "library_version": __version__,
            "params": {k: _jsonable(v, k) for k, v in self.get_params().items()},
            "classes": [_jsonable(c, "classes") for c in self.classes_],
            "positive_class": _jsonable(self.positive_class_, "positive_class"),
            "target": self.target_name_,
            "columns": list(self.columns_),
            "feature_names_in": hasattr(self, "feature_names_in_"),
            "discretization": self.discretization_.to_dict(),
            "feature_subsets": [list(s) for s in self.feature_subsets_],
            "n_candidates": self.n_candidates_,
            "rules": [
                rule_to_dict(r, s) for r, s in zip(self.rules_, self.rules_.stats, strict=True)
            ],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The fitted model as human-readable JSON; ``from_json`` restores it exactly."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict) -> LibreClassifier:
        if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
            raise ModelFormatError(
                "Not a libre-flows model: the 'format' field is missing or wrong."
            )
        version = data.get("format_version")
        if version != MODEL_FORMAT_VERSION:
            raise ModelFormatError(
                f"Model format version {version!r} is not supported by this release "
                f"(it reads version {MODEL_FORMAT_VERSION}); retrain or upgrade libre-flows."
            )
        try:
            model = cls(**data["params"])
            model.classes_ = label_array(data["classes"])
            model.positive_class_ = data["positive_class"]
            model.target_name_ = data["target"]
            model.columns_ = list(data["columns"])
            model.n_features_in_ = len(model.columns_)
            if data.get("feature_names_in"):
                model.feature_names_in_ = np.asarray(model.columns_, dtype=object)
            model.discretization_ = Discretization.from_dict(data["discretization"])
            model.feature_subsets_ = [tuple(s) for s in data["feature_subsets"]]
            model.n_candidates_ = int(data["n_candidates"])
            parsed = [rule_from_dict(r) for r in data["rules"]]
        except (KeyError, TypeError) as exc:
            raise ModelFormatError(
                f"Malformed libre-flows model: missing or bad field {exc}."
            ) from None
        model.rules_ = RuleSet(
            tuple(r for r, _ in parsed),
            target=model.target_name_,
            positive_class=model.classes_[1],
            negative_class=model.classes_[0],
            stats=tuple(s for _, s in parsed),
        )
        return model

    @classmethod
    def from_json(cls, text: str) -> LibreClassifier:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ModelFormatError(f"The model is not valid JSON: {exc}.") from None
        return cls.from_dict(data)


def _target_name(y) -> str:
    name = getattr(y, "name", None)
    return str(name) if name is not None else "y"


def _jsonable(value, what: str):
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v, what) for v in value]
    if isinstance(value, np.ndarray):
        return [_jsonable(v, what) for v in value.tolist()]
    if what == "random_state":
        return None
    raise ModelFormatError(
        f"Cannot write {what}={value!r} ({type(value).__name__}) to JSON: use str, int, float "
        "or bool labels and parameters."
    )
