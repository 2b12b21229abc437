"""``LibreSearchCV``: LIBRE tuned by an inner stratified cross-validation on the training data.

The paper (Mita et al. 2020, section 4, "Parameter Tuning") tunes LIBRE over

* the number of weak learners ``n_estimators`` in {5, 20, 50} (each on up to 5 features),
* the FindBoundaryPoint heuristic in {H1, H2},
* the set-cover weight ``alpha`` in {.5, .7, .9},
* the ChiMerge threshold ``chi2_threshold`` in {6, 4.6, 4},

54 combinations (:data:`PAPER_GRID`). Its LIBRE has no early stop (its appendix leaves the
effect of early stopping unreported; only "LIBRE 3" caps the rules); the authors' code offers
one as "use only the first k selected rules", and this library tunes it. The default grid
:data:`DEFAULT_GRID` is the paper's grid times

* the early stop ``max_rules`` in {1, 2, 3, 5, 8} (:data:`EARLY_STOP`),
* the learners' subset-size policy ``subset_sizes`` in {"cycle", "fixed"},
* for H1 only, the learners' ``conflict_tolerance`` in {0, 0.5} (:data:`CONFLICT_TOLERANCES`;
  0 is the paper's learner), with ChiMerge uncapped (``max_intervals=None``, as in the paper:
  only the threshold stops the merging); H2 keeps the estimator's cap of 3 intervals (its
  generic kernel is the slow one on many bins, and the studies never chose it),

810 combinations. On large data (at least :data:`LARGE_DATA_POSITIVES` positive rows) the H1
half also tries the selection filter: the local-support floor ``min_local_support`` in
{0.05, 0.01} and the top-K cut ``top_k`` in {200, None} (:data:`SELECTION_FILTERS`;
:data:`LARGE_DATA_GRID`, 2430 combinations): a 1 % floor still means at least 10 positive
records there, and the union of 50 learners holds far more than 200 candidates. On more than
:data:`~libre_lib.estimator.AUTO_UNCAPPED_ROWS` training rows the H1 half's bins are capped at
3 intervals too, as ``LibreClassifier``'s "auto" caps them (cost: uncapped bins keep the
records from compressing; no development dataset is that large), and on more than
:data:`~libre_lib.estimator.AUTO_SIGNIFICANT_ROWS` its uncapped bins keep only significant cut
points (``significant_cuts``, the thirty-sixth round; magic, adult and bank). On wide data
(more than :data:`WIDE_COLUMNS` usable columns) the learners see up to
:data:`WIDE_MAX_FEATURES` columns instead of the estimator's 5 (the twenty-fifth design round:
concepts on many columns need more atoms than 5 columns give). :func:`default_grid` gives the
grid for a number of positives and usable columns. The grid is evaluated with an inner
stratified k-fold on the data given to :meth:`LibreSearchCV.fit`. The choice prefers
simple models: among the combinations whose mean validation score (F1 of the positive class by
default) is within a tolerance of the best mean, the one with the fewest mean rules (then the
best mean score, then grid order); it is refitted on all of that data. The tolerance is one
standard error of the best mean score (``standard_errors=1``), or ``score_tolerance`` when
that is larger (default 0: until the eighth study round of docs/benchmarks.md it was 0.01).

**Why it is cheap.** The grid is evaluated exactly (every combination is scored as if
``LibreClassifier(**params).fit`` had been called on the inner training fold), but the work
shared between combinations is done once per fold, using LibreClassifier's public stages:

* one discretization per ``(chi2_threshold, max_intervals)``; thresholds that give the same bins
  (frequent on large data, where ``max_intervals`` caps every numeric column) share all that
  follows;
* one weak learner per distinct feature subset: the subsets of ``n_estimators=5`` and ``20``
  are the first ones drawn for ``n_estimators=50`` (same seed), so their candidate sets are
  unions of learners already run;
* ``contiguous`` is a learner setting (its learners widen their points), as
  ``conflict_tolerance`` is;
* ``top_k`` and ``min_local_support`` only change the selection stage, which reuses the
  candidates; the filtered candidates' cover problem (their coverage of the records,
  collapsed into distinct patterns) is built once and shared by every ``alpha``;
* ``max_rules`` costs nothing: the greedy cover capped at ``k`` rules is the first ``k`` rules
  of the uncapped cover, so one cover is run and every cap is scored on its prefix.

On the default grid a fold costs one ensemble of 50 learners per distinct discretization and
learner setting (H1: subset-size policy x conflict tolerance on uncapped bins; H2: policy on
capped bins; thresholds that give the same bins share them), one cover problem per distinct
(discretization, learner setting, n_estimators, top_k, min_local_support) and one greedy cover
per alpha on it, instead of one full fit per combination (measured times: docs/benchmarks.md). The
equivalence with plain fits is pinned by a unit test.

**Why it fits in memory.** A fold visits the grid grouped by what the points share
(discretization, then learner setting, then the learners' subsets, then the filter) and drops
each group's learners, union, cover problem and evaluated rules once its points are scored,
so it holds one of each at a time, however large the grid; cover problems stay bit-packed.
Peak RSS of the default search per development dataset: docs/benchmarks.md, "Search memory".
"""

from __future__ import annotations

import logging
import numbers
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.metrics import (
    average_precision_score,
    check_scoring,
    jaccard_score,
    make_scorer,
    precision_score,
    recall_score,
)
from sklearn.model_selection import ParameterGrid, StratifiedKFold, check_cv
from sklearn.utils.validation import check_is_fitted

from .ensemble import learn_subset, union_candidates
from .errors import (
    DataError,
    LibreWarning,
    ParameterError,
    counted,
    excerpt,
    user_stacklevel,
)
from .estimator import (
    AUTO_FALLBACK,
    AUTO_SIGNIFICANT_ROWS,
    AUTO_STOPS,
    AUTO_UNCAPPED_ROWS,
    LibreClassifier,
    _fit_saying,
    _gain,
    _said,
    _seed,
    below_inner_message,
    below_trivial_message,
    choice_order,
    choose_candidate,
    f1_score,
    falls_short,
    flag_every_row_f1,
    growing_factors,
    libre_tags,
    reaches,
    refit_in_choice_order,
    refit_order,
    resolve_tolerance,
    weighted_rows,
    with_missing_params,
)
from .inputs import (
    Target,
    as_frame,
    binary_target,
    declared_categorical,
    label_array,
    one_vs_rest,
    one_vs_rest_labels,
    pandas_frame,
    refuse_infinite,
    warn_reordered,
)
from .params import AUTO, SEARCH_PARAMETERS, broken_rule, validate_params
from .progress import Heartbeat, progress_on_stderr
from .rules import rule_from_point
from .selection import Selection, cover_filtered, filter_for_cover, majority_prefix

logger = logging.getLogger(__name__)

#: The paper's grid (section 4, "Parameter Tuning"); ``max_features`` stays at 5 ("each weak
#: learner uses up to 5 features"), every other parameter at LibreClassifier's default.
PAPER_GRID = {
    "n_estimators": [5, 20, 50],
    "heuristic": ["H1", "H2"],
    "alpha": [0.5, 0.7, 0.9],
    "chi2_threshold": [6.0, 4.6, 4.0],
}

#: Early stops of the weighted set cover tried by default ("use only the first k rules" of the
#: cover): those ``LibreClassifier(max_rules="auto")`` chooses from. Free to tune: every cap
#: is a prefix of the uncapped cover. They end at 8 rules since the twenty-first study round
#: (docs/benchmarks.md; 21 and None, no early stop, went in the ninth, 13 in the
#: twenty-first, each by non-inferiority on the design half): a default rule set has at most 8
#: rules. For more (large data with many rules: bank, spambase) list the stops to tune,
#: ``LibreSearchCV(max_rules=[1, 2, 3, 5, 8, 13])`` (a spec's ``tuning.max_rules``), or
#: ``[None]`` for the paper's selection.
EARLY_STOP = list(AUTO_STOPS)

#: Conflict tolerances tried by default with H1 (0: the paper's learner).
CONFLICT_TOLERANCES = [0.0, 0.5]

#: Selection filters tried with H1 on large data: the local-support floor and the top-K cut
#: (the estimator's defaults first).
SELECTION_FILTERS = {"min_local_support": [0.05, 0.01], "top_k": [200, None]}

#: Positive rows from which :func:`default_grid` adds :data:`SELECTION_FILTERS`.
LARGE_DATA_POSITIVES = 1000


#: The default grid, 810 points in two parts (``ParameterGrid`` list syntax): the paper's
#: grid times the learners' subset-size policy and the early stop, and for H1 also times
#: ``conflict_tolerance`` in :data:`CONFLICT_TOLERANCES` (the tolerant learner exists for H1
#: only). The extra axes were kept because nested-CV studies on the paper's datasets
#: (docs/benchmarks.md) showed them helping (fewer rules on australian, liver and bank;
#: tic-tac-toe's F1 from .97 to .99; the tolerance: adult .63 -> .66, pima .60 -> .62 with 3
#: rules instead of 9) without hurting the others beyond noise; H1 runs on uncapped ChiMerge
#: bins (transfusion .45 -> .48, bank .55 -> .57 in the nested study). The early stops grow
#: like the Fibonacci numbers (each cap about 1.6x the previous one).
class LibraryGrid(list):
    """A grid the library builds (:data:`DEFAULT_GRID`, :func:`default_grid`): the parameters
    it leaves at "auto" take :data:`~libre_lib.estimator.AUTO_FALLBACK` by design, without a
    warning."""


DEFAULT_GRID = LibraryGrid(
    [
        {
            **PAPER_GRID,
            "heuristic": ["H1"],
            "subset_sizes": ["cycle", "fixed"],
            "max_rules": EARLY_STOP,
            "conflict_tolerance": CONFLICT_TOLERANCES,
            "max_intervals": [None],
        },
        {
            **PAPER_GRID,
            "heuristic": ["H2"],
            "subset_sizes": ["cycle", "fixed"],
            "max_rules": EARLY_STOP,
        },
    ]
)

#: The default grid on large data, 2430 points: :data:`DEFAULT_GRID` with the H1 half also
#: times :data:`SELECTION_FILTERS`. In the nested studies the weaker floor and no top-K cut,
#: with the early stop at 13 rules (before round 21), lift adult from .66 to .68-.69 and bank
#: from .57 to .59; on the small datasets they only add selection noise (pima .65 -> .60).
LARGE_DATA_GRID = LibraryGrid([{**DEFAULT_GRID[0], **SELECTION_FILTERS}, dict(DEFAULT_GRID[1])])


#: Usable columns (at least two distinct present values) above which :func:`default_grid`'s
#: learners see up to :data:`WIDE_MAX_FEATURES` columns (``max_features``) instead of the
#: estimator's 5: the twenty-fifth round of docs/benchmarks.md (spambase, digits, wdbc).
WIDE_COLUMNS = 20
WIDE_MAX_FEATURES = 8


def usable_columns(frame: pd.DataFrame) -> int:
    """How many columns of ``frame`` have at least two distinct present values."""
    return int((frame.nunique(dropna=True) >= 2).sum())


def wide_columns(max_features, frame: pd.DataFrame) -> int:
    """The ``n_columns`` :func:`default_grid` is given for a search whose estimator has
    ``max_features``: :func:`usable_columns` of ``frame`` while ``max_features`` is the
    estimator's default (5), else 0: a ``max_features`` the user set is not overridden."""
    return usable_columns(frame) if max_features == LibreClassifier().max_features else 0


def caps_bins(n_rows: int) -> bool:
    """Whether the default grid's H1 half is on capped ChiMerge bins for a fit on ``n_rows``
    training rows: above :data:`~libre_lib.estimator.AUTO_UNCAPPED_ROWS`, as
    ``LibreClassifier``'s "auto" caps them (uncapped bins stop the records from compressing)."""
    return n_rows > AUTO_UNCAPPED_ROWS


def thins_cuts(n_rows: int) -> bool:
    """Whether the default grid's uncapped bins keep only significant cut points
    (``significant_cuts``) for a fit on ``n_rows`` training rows: above
    :data:`~libre_lib.estimator.AUTO_SIGNIFICANT_ROWS`, as ``LibreClassifier``'s "auto" thins
    its uncapped bins (a cost rule: uncapped ChiMerge keeps 15-25 intervals on every noisy
    numeric column, and the search's cost grows with the rows)."""
    return n_rows > AUTO_SIGNIFICANT_ROWS


def default_grid(
    n_positives: int,
    capped_bins: bool = False,
    early_stops: bool = True,
    n_columns: int = 0,
    significant_cuts: bool = False,
) -> list[dict]:
    """The grid ``LibreSearchCV(param_grid=None)`` searches on data with ``n_positives``
    positive rows and ``n_columns`` usable columns (:func:`usable_columns`):
    :data:`LARGE_DATA_GRID` from :data:`LARGE_DATA_POSITIVES` on, else :data:`DEFAULT_GRID`,
    with ``max_features`` = :data:`WIDE_MAX_FEATURES` on more than :data:`WIDE_COLUMNS`
    columns (0, the default: the grid as for narrow data). ``capped_bins``: the H1 half on
    ChiMerge bins capped at the estimator's capped ``max_intervals`` (3) instead of uncapped
    ones (on more rows than :func:`caps_bins` allows, and in the streamed pipeline: uncapped
    bins keep 15-25 intervals on every noise feature whatever the rows, so the distinct records
    stop compressing and the refit's cost grows with the rows). ``early_stops=False``: without
    the ``max_rules`` axis (the search's ``max_rules`` fixes it). ``significant_cuts``: the
    parts on uncapped bins keep only significant cut points (on more rows than
    :func:`thins_cuts` allows)."""
    grid = LARGE_DATA_GRID if n_positives >= LARGE_DATA_POSITIVES else DEFAULT_GRID
    parts = [dict(part) for part in grid]
    if capped_bins:
        cap = AUTO_FALLBACK["max_intervals"]
        parts = [
            {**part, "max_intervals": [cap]} if part.get("max_intervals") == [None] else part
            for part in parts
        ]
    if significant_cuts:
        parts = [
            {**part, "significant_cuts": [True]} if part.get("max_intervals") == [None] else part
            for part in parts
        ]
    if not early_stops:
        parts = [{k: v for k, v in part.items() if k != "max_rules"} for part in parts]
    if n_columns > WIDE_COLUMNS:
        parts = [{**part, "max_features": [WIDE_MAX_FEATURES]} for part in parts]
    return LibraryGrid(parts)


def _with_early_stops(grid, stops: list) -> dict | list:
    """``grid`` (``ParameterGrid`` syntax) with the early-stop axis ``max_rules`` = ``stops``
    in each of its parts; a part that tunes ``max_rules`` already is refused."""
    parts = [grid] if isinstance(grid, Mapping) else grid
    if not isinstance(parts, Sequence) or not all(isinstance(p, Mapping) for p in parts):
        return grid  # ParameterGrid names what is wrong with it
    if any("max_rules" in part for part in parts):
        raise ParameterError(
            "max_rules lists the early stops to tune and param_grid tunes max_rules too: pick one."
        )
    widened = [{**part, "max_rules": list(stops)} for part in parts]
    return widened[0] if isinstance(grid, Mapping) else widened


# Parameters fixed by the search itself, never tuned.
_FIXED = ("positive_class", "categorical_features", "refine", "random_state", "n_jobs", "verbose")
# Which stage each tunable parameter acts on.
_DISCRETIZATION = ("chi2_threshold", "max_intervals", "significant_cuts", "merge_order")
_LEARNERS = (
    "max_features",
    "subset_sizes",
    "heuristic",
    "seeds",
    "conflict_tolerance",
    "contiguous",
)
_SELECTION = ("alpha", "top_k", "max_rules", "min_local_support")

#: How the warning starts that the estimator sets a parameter the grid tunes (a pipeline says
#: it in its own note, and filters the warning out).
ESTIMATOR_TUNED = "LibreSearchCV: the estimator sets "


class LibreSearchCV(ClassifierMixin, BaseEstimator):
    """LIBRE with its parameters chosen by an inner stratified cross-validation.

    Parameters
    ----------
    param_grid : dict or list of dicts, default=None
        LibreClassifier parameters to try (``ParameterGrid`` syntax). ``None`` is
        :func:`default_grid` of the training data's positives: :data:`DEFAULT_GRID` (the
        paper's 54-point grid :data:`PAPER_GRID` times ``subset_sizes`` in {"cycle", "fixed"}
        and the early stop ``max_rules`` in {1, 2, 3, 5, 8}, and for H1
        ``conflict_tolerance`` in {0, 0.5} on uncapped bins, ``max_intervals=None``), or on
        data with at least 1000 positive rows :data:`LARGE_DATA_GRID` (H1 also times
        ``min_local_support`` in {0.05, 0.01} and ``top_k`` in {200, None}); when
        ``max_rules`` is fixed, the same without the ``max_rules`` axis. On more than
        :data:`~libre_lib.estimator.AUTO_UNCAPPED_ROWS` rows the H1 half's bins are capped
        (``max_intervals=3``), as ``LibreClassifier``'s "auto" caps them: uncapped bins stop
        the records from compressing and the search's cost grows with the rows. On more
        than :data:`~libre_lib.estimator.AUTO_SIGNIFICANT_ROWS` rows, up to that many, its
        uncapped bins keep only significant cut points (``significant_cuts=True``;
        docs/benchmarks.md, thirty-sixth round). On more than
        :data:`WIDE_COLUMNS` usable columns the learners see up to :data:`WIDE_MAX_FEATURES`
        columns (``max_features``), unless ``estimator`` sets its own. Pass ``PAPER_GRID``
        for the paper's grid alone. The grid searched is kept in ``param_grid_``.
        ``positive_class``, ``categorical_features``, ``random_state`` and ``n_jobs`` cannot be
        tuned.
    estimator : LibreClassifier or None, default=None
        Holds the parameters that are not tuned (default: LibreClassifier's defaults). A value
        it sets for a parameter the grid tunes is replaced by the grid's, with a warning.
    max_rules : int, list of (int or None), or None, default=None
        An int caps the rules of every candidate (``max_rules=3`` is the paper's "LIBRE 3");
        overrides ``estimator.max_rules``. A list gives the early stops to tune in place of
        the default grid's :data:`EARLY_STOP` (``[1, 2, 3, 5, 8, 13]`` allows 13 rules; None in
        it: no early stop, the paper's selection): it becomes the ``max_rules`` axis of every
        part of the grid, which must not tune ``max_rules`` itself. None tunes the grid's own
        early stops (the default grid's :data:`EARLY_STOP`).
    positive_class : label or None, default=None
        The class the rules describe; overrides ``estimator.positive_class``. When None it is
        resolved once on the training labels (as LibreClassifier does) and then fixed for every
        inner fold, so a fold can never flip it.
    categorical_features : list, bool mask or None, default=None
        Extra categorical columns; overrides ``estimator.categorical_features`` when given.
    refine : {"f1", "accuracy"} or None, default=None
        Boundary refinement of the refitted model (``LibreClassifier``'s ``refine``; overrides
        ``estimator.refine`` when given; never tuned: the inner folds score the rules as the
        set cover leaves them). None leaves the estimator's (by default none: ChiMerge's cut
        points, as in the paper). On the design half of the development datasets "f1" raised
        the mean outer F1 by 0.003, short of the bar for a default (docs/benchmarks.md,
        sixteenth round).
    scoring : "f1", str, callable or None, default="f1"
        "f1" is the F1 score of the positive class (whatever its label), and so are
        "precision", "recall", "jaccard" and "average_precision" of it. Any other value is
        passed to ``sklearn.metrics.check_scoring`` (e.g. "accuracy", "balanced_accuracy" or a
        scorer from ``make_scorer``).
    score_tolerance : float >= 0, default=0.0
        A floor for the tolerance: the choice is the combination with the fewest mean rules
        among those whose mean score is at least the best mean score minus the tolerance
        (ties: better mean score, then grid order), and the tolerance is the larger of
        ``score_tolerance`` and ``standard_errors`` standard errors of the best mean score.
        A positive floor (0.01 before the eighth study round) lets a simpler model win on large
        data too, where the standard error is tiny, at some cost in F1.
    standard_errors : float >= 0, default=1.0
        The one-standard-error rule: the standard error is the best combination's std over the
        inner folds / sqrt(folds) (``std_test_score``, numpy's std: over the folds as they are,
        not as a sample, which reads about 10 % narrower at 5 folds; the defaults were chosen
        with it), so on small, noisy data the search prefers fewer rules.
        ``score_tolerance=0, standard_errors=0`` picks the best mean score (exact ties go to
        fewer rules). The defaults were chosen with the nested-CV studies of
        docs/benchmarks.md (design half; eighth round for the floor).
    cv : int or cross-validation splitter, default=5
        An int gives ``StratifiedKFold(cv, shuffle=True)`` seeded from ``random_state``.
    refit : bool, default=True
        Refit the best combination on all the data (needed for ``predict``). With False only
        the search results (``cv_results_``, ``best_params_``, ...) are set.
    n_jobs : int or None, default=None
        Processes for the inner CV (one task per fold and learner setting); the final refit
        runs its learners in this many threads. Results do not depend on it.
    random_state : int, RandomState or None, default=None
        Seeds the inner folds and the learners' feature subsets. Every candidate and the final
        refit use the same seed, so ``best_estimator_`` equals
        ``LibreClassifier(random_state=seed, **fixed_params_, **best_params_)`` (with the
        estimator's other parameters and ``refine``) fitted on the same data (an int
        ``random_state`` is used as that seed directly).
    verbose : int >= 0 or bool, default=0
        0: the progress goes to the ``libre_lib.search`` logger only (silent unless logging is
        set up). 1 or more: during ``fit`` that logger also writes it on standard error: the
        search's size, each inner fold as it ends with the time left, the choice and the
        refit.

    Attributes
    ----------
    best_params_ : dict
        The tuned parameters of the chosen combination (keys of the grid; the default grid's
        ``significant_cuts`` too, on the rows where it sets it).
    fixed_params_ : dict
        The values (:data:`~libre_lib.estimator.AUTO_FALLBACK`) the chosen combination used
        for the parameters the estimator leaves at "auto" and its part of the grid does not
        tune (e.g. the default grid's H2
        half: ``max_intervals=3, conflict_tolerance=0.0``); a ``param_grid`` of the user's
        that leaves such parameters is warned about.
    best_score_ : float
        Its mean validation score (at most ``tolerance_`` below the best mean score, which is
        ``cv_results_["mean_test_score"].max()``).
    tolerance_ : float
        The tolerance the choice used: max(score_tolerance, standard_errors x standard error).
    best_estimator_ : LibreClassifier
        The chosen combination refitted on all the data given to ``fit``.
    param_grid_ : dict or list of dicts
        The grid searched (``param_grid``, or the default grid resolved for the data).
    best_index_ : int
        Index of the chosen combination in ``cv_results_``.
    cv_results_ : dict of arrays
        ``params``, ``param_<name>``, ``split<k>_test_score``, ``mean_test_score``,
        ``std_test_score``, ``rank_test_score``, ``split<k>_n_rules``, ``mean_n_rules``,
        ``mean_n_atoms``. No ``mean_fit_time`` or ``mean_score_time`` as in ``GridSearchCV``:
        candidates share their discretizations, learners and covers, so one candidate's cost
        is not defined; ``search_time_`` is the whole inner CV's.
    refit_fallbacks_ : int
        Candidates refitted after the chosen one because its refit kept no rule although it
        kept rules in most inner folds (:meth:`checked_refit`); usually 0.
    rules_, classes_, positive_class_, n_features_in_ : delegated to ``best_estimator_``.
    n_splits_ : int
        Number of inner folds.
    seed_ : int
        The seed every candidate and the refit used.
    refit_time_, search_time_ : float
        Seconds spent on the final refit and on the inner CV.
    """

    def __init__(
        self,
        param_grid=None,
        *,
        estimator=None,
        max_rules=None,
        positive_class=None,
        categorical_features=None,
        refine=None,
        scoring="f1",
        score_tolerance=0.0,
        standard_errors=1.0,
        cv=5,
        refit=True,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.param_grid = param_grid
        self.estimator = estimator
        self.max_rules = max_rules
        self.positive_class = positive_class
        self.categorical_features = categorical_features
        self.refine = refine
        self.scoring = scoring
        self.score_tolerance = score_tolerance
        self.standard_errors = standard_errors
        self.cv = cv
        self.refit = refit
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def __setstate__(self, state):
        super().__setstate__(with_missing_params(type(self), state))

    def __sklearn_tags__(self):
        return libre_tags(super().__sklearn_tags__())

    def set_params(self, **params):
        """Set the search's parameters, ``estimator__<name>`` those of its estimator (as
        scikit-learn's meta-estimators take them).

        Parameters
        ----------
        **params
            Parameter names and values.

        Returns
        -------
        LibreSearchCV
            This search.
        """
        nested = sorted(k.split("__", 1)[1] for k in params if k.startswith("estimator__"))
        if nested and self.estimator is None and params.get("estimator") is None:
            raise ParameterError(
                f"LibreSearchCV.set_params got {', '.join(f'estimator__{k}' for k in nested)}, "
                "but estimator is None (LibreClassifier's defaults): there is no estimator to "
                "set them on. Pass one with them: set_params(estimator=LibreClassifier("
                + ", ".join(f"{k}=..." for k in nested)
                + ")), or LibreSearchCV(estimator=LibreClassifier(...))."
            )
        return super().set_params(**params)

    # -- candidates ---------------------------------------------------------------------------

    def _fixed_positive_class(self):
        """``positive_class``, else the estimator's (None: resolved on the labels)."""
        if self.positive_class is not None:
            return self.positive_class
        return getattr(self.estimator, "positive_class", None)

    def _base_params(self, positive_class) -> dict:
        base = self.estimator if self.estimator is not None else LibreClassifier()
        if not isinstance(base, LibreClassifier):
            raise ParameterError(
                "The 'estimator' parameter of LibreSearchCV must be a LibreClassifier or None. "
                f"Got {type(base).__name__} instead."
            )
        params = base.get_params(deep=False)
        if self.max_rules is not None and not isinstance(self.max_rules, (list, tuple)):
            params["max_rules"] = self.max_rules  # one cap, not tuned (a list: _candidates)
        if self.categorical_features is not None:
            params["categorical_features"] = self.categorical_features
        params["positive_class"] = positive_class
        if self.refine is not None:
            params["refine"] = self.refine
        return params

    def _early_stops(self) -> list | None:
        """``max_rules`` as the early stops to tune (a list or tuple of caps), else None."""
        stops = self.max_rules
        if not isinstance(stops, (list, tuple)):
            return None
        if not stops:
            raise ParameterError(
                "The 'max_rules' parameter of LibreSearchCV is an empty list: list the early "
                "stops to tune (e.g. [1, 2, 3, 5, 8, 13]), or give one cap, or None."
            )
        for stop in stops:
            rule = broken_rule("max_rules", stop)
            if rule is not None or isinstance(stop, str):
                raise ParameterError(
                    "Each early stop in the 'max_rules' parameter of LibreSearchCV must be an "
                    f"int >= 1 or None (no early stop). Got {excerpt(stop)} in {excerpt(stops)}."
                )
        if len(set(stops)) < len(stops):
            raise ParameterError(
                "The 'max_rules' parameter of LibreSearchCV lists an early stop twice: "
                f"{excerpt(stops)}."
            )
        return list(stops)

    def _candidates(self, base: dict, n_positives: int, frame: pd.DataFrame) -> list[dict]:
        stops = self._early_stops()
        if self.param_grid is not None:
            grid = self.param_grid
            if hasattr(grid, "fit") and hasattr(grid, "get_params"):  # GridSearchCV's order
                raise ParameterError(
                    "LibreSearchCV's first argument is param_grid; pass the estimator by name: "
                    f"LibreSearchCV(estimator={type(grid).__name__}(...))."
                )
        else:  # with the cap fixed or listed, the default grid without its early-stop axis
            capped = caps_bins(frame.shape[0])
            thinned = thins_cuts(frame.shape[0]) and not base["significant_cuts"]
            grid = default_grid(
                n_positives,
                capped,
                self.max_rules is None,
                wide_columns(base["max_features"], frame),
                thinned,
            )
            if capped:  # the rows decided these, not a choice: said with the progress
                logger.info(
                    "LibreSearchCV: the default grid's H1 half is on capped bins (more than "
                    "%s rows)", f"{AUTO_UNCAPPED_ROWS:,}"
                )  # fmt: skip
            elif thinned:
                logger.info(
                    "LibreSearchCV: the default grid's uncapped bins keep only significant cut "
                    "points (more than %s rows)", f"{AUTO_SIGNIFICANT_ROWS:,}"
                )  # fmt: skip
        if stops is not None:
            grid = _with_early_stops(grid, stops)
        try:
            points = list(ParameterGrid(grid))
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"Invalid param_grid for LibreSearchCV: {exc}") from None
        if not points:
            raise ParameterError("The param_grid of LibreSearchCV is empty.")
        for point in points:
            unknown = sorted(set(point) - set(base))
            if unknown:
                raise ParameterError(
                    f"param_grid names {unknown}, which are not LibreClassifier parameters. "
                    f"Valid names: {sorted(set(base) - set(_FIXED))}."
                )
            fixed = sorted(set(point) & set(_FIXED))
            if fixed:
                raise ParameterError(
                    f"param_grid may not tune {fixed}: set them on LibreSearchCV instead."
                )
            if "max_rules" in point and self.max_rules is not None and stops is None:
                raise ParameterError(
                    "max_rules is both fixed (max_rules=...) and tuned (param_grid): pick one."
                )
            validate_params(point, owner="LibreSearchCV", noun="param_grid entry")
            auto = sorted(k for k, v in point.items() if isinstance(v, str) and v == AUTO)
            if auto:
                raise ParameterError(
                    f"param_grid sets {auto} to 'auto', the estimator's own inner choice: list "
                    "the values for the search to try instead."
                )
        # a parameter the grid leaves at "auto" takes AUTO_FALLBACK's value
        fixed = [
            {k: v for k, v in AUTO_FALLBACK.items() if base.get(k) == AUTO and k not in point}
            for point in points
        ]
        candidates = [{**base, **f, **point} for f, point in zip(fixed, points, strict=True)]
        for params in candidates:
            validate_params(params)
        named = {k: v for f in fixed for k, v in f.items()}
        if named and not _library_grid(self.param_grid):
            warnings.warn(
                "LibreSearchCV: param_grid does not tune "
                + ", ".join(f"{k} (fitted as {v!r})" for k, v in named.items())
                + ", which the estimator leaves at 'auto'. List values for them in param_grid "
                "to tune them, or set them on the estimator; fixed_params_ keeps what the "
                "chosen candidate used.",
                LibreWarning,
                stacklevel=user_stacklevel(),
            )
        self._tuned_names = sorted({k for point in points for k in point})
        self._warn_overridden(self._tuned_names)
        self._grid_points = points
        self._fixed_points = fixed
        self.param_grid_ = grid
        return candidates

    def _warn_overridden(self, tuned: list[str]) -> None:
        """Warn when ``estimator`` sets a parameter the grid tunes: the grid's values replace
        it, and a cap of one rule set there was searched over 1 to 8 without a word."""
        if self.estimator is None:
            return
        given = self.estimator.get_params(deep=False)
        defaults = LibreClassifier().get_params(deep=False)
        overridden = {k: given[k] for k in tuned if k in given and given[k] != defaults.get(k)}
        if self.max_rules is not None:  # the search's own max_rules said what to do with it
            overridden.pop("max_rules", None)
        if not overridden:
            return
        names = ", ".join(f"{k}={v!r}" for k, v in overridden.items())
        keep = ", ".join(sorted(overridden))
        warnings.warn(
            f"{ESTIMATOR_TUNED}{names}, which the grid tunes: the grid's values "
            f"replace them (the estimator holds the parameters that are not tuned). To keep "
            f"them, pass a param_grid without {keep}"
            + (
                " (or LibreSearchCV(max_rules=...), which fixes the cap of every candidate)"
                if "max_rules" in overridden
                else ""
            )
            + "; to tune them, leave them at their defaults on the estimator.",
            LibreWarning,
            stacklevel=user_stacklevel(),
        )

    # -- fitting ------------------------------------------------------------------------------

    def fit(self, X, y, sample_weight=None, groups=None):
        """Tune on ``X, y`` by inner CV, then refit the best combination on all of it.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            The training rows.
        y : array-like of shape (n_samples,)
            Their labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights (see :meth:`LibreClassifier.fit`): the inner folds split
            the rows of weight > 0, train on their weights and score the validation rows
            weighted (F1, or the ``scoring`` scorer with ``sample_weight``); the refit gets
            them too.
        groups : array-like of shape (n_samples,), default=None
            Group labels for a group splitter given as ``cv`` (e.g. ``GroupKFold``).

        Returns
        -------
        self : LibreSearchCV
        """
        with progress_on_stderr(logger, self.verbose):
            return self._fit(X, y, sample_weight, groups)

    def _fit(self, X, y, sample_weight, groups=None):
        started = time.perf_counter()
        self._forget_fit()
        X = pandas_frame(X)
        warn_reordered(X, y=y, sample_weight=sample_weight, groups=groups)
        plan = self.plan(X, y, sample_weight, groups)
        logger.info(
            "LibreSearchCV: %d candidates x %d folds (%d tasks, n_jobs=%s) on %d rows",
            len(plan.candidates),
            plan.n_splits,
            plan.n_splits,
            self.n_jobs,
            plan.frame.shape[0],
        )
        shape = (len(plan.candidates), plan.n_splits)
        scores, n_rules, n_atoms = np.full(shape, np.nan), np.zeros(shape), np.zeros(shape)
        # one task per fold: the folds' discretizations and learners are shared by candidates
        everything = list(range(len(plan.candidates)))
        jobs = (delayed(plan.evaluate)(k, everything) for k in range(plan.n_splits))
        parallel = Parallel(n_jobs=self.n_jobs, return_as="generator")
        workers = max(1, min(effective_n_jobs(self.n_jobs), plan.n_splits))
        fold_seconds = []
        still = Heartbeat(
            logger,
            lambda seconds: (
                f"LibreSearchCV: still working: {len(fold_seconds)}/{plan.n_splits} tasks done, "
                f"none finished in the last {seconds:.0f} s"
            ),
        )
        with still:
            for k, result in enumerate(parallel(jobs)):
                scores[:, k], n_rules[:, k], n_atoms[:, k] = np.asarray(result["results"]).T
                fold_seconds.append(result["seconds"])
                still.said()
                self._say_fold(k, plan, result, scores, fold_seconds, started, workers)
        self.search_time_ = time.perf_counter() - started
        best = self.choose(plan, scores, n_rules, n_atoms)
        if plan.scorer is None and self.best_score_ <= 0:
            warnings.warn(
                "No point of the grid scored an F1 above 0 on the inner folds' held-out rows: "
                "the rules each fold learned found no positive row they had not seen"
                + (
                    ", so do not expect the refitted rules to find any on new rows."
                    if self.refit
                    else "."
                ),
                LibreWarning,
                stacklevel=user_stacklevel(),
            )
        elif plan.scorer is None:
            trivial = flag_every_row_f1(plan.positive, plan.weight)
            top = float(np.nanmax(self.cv_results_["mean_test_score"]))  # not only the chosen
            message = below_trivial_message(top, trivial, chosen=self.best_score_)
            if message:
                warnings.warn(message, LibreWarning, stacklevel=user_stacklevel())
        logger.info(
            "LibreSearchCV: best %s (mean score %.3f, %.1f rules) after %.1f s",
            self.best_params_,
            self.best_score_,
            self.cv_results_["mean_n_rules"][best],
            self.search_time_,
        )

        if not self.refit:
            return self
        refit_started = time.perf_counter()
        with warnings.catch_warnings(record=True) as said:  # the shipped refit's, given below
            warnings.simplefilter("always")
            self.best_estimator_ = self.checked_refit(
                lambda index: self._refit_point(plan, index, X, y, sample_weight)
            )
        n_positive = None
        if plan.scorer is None:  # the inner score is F1: compare the refit's training F1
            weight = np.ones(len(plan.positive)) if plan.weight is None else plan.weight
            n_positive = float(weight[np.asarray(plan.positive, dtype=bool)].sum())
            self.best_estimator_, said = self.more_learners_check(
                self.best_estimator_,
                said,
                lambda k: self._refit_point(plan, self.best_index_, X, y, sample_weight, k),
                n_positive,
            )
        _said(self.best_estimator_, said)
        self.refit_time_ = time.perf_counter() - refit_started
        logger.info(
            "LibreSearchCV: refitted on %d rows in %.1f s: %d rules",
            plan.frame.shape[0],
            self.refit_time_,
            len(self.best_estimator_.rules_),
        )
        if n_positive is not None:
            weight = np.ones(len(plan.positive)) if plan.weight is None else plan.weight
            rows = int(np.count_nonzero(np.asarray(plan.positive, dtype=bool) & (weight > 0)))
            short = below_inner_message(self.best_estimator_, n_positive, self.best_score_, rows)
            if short:
                warnings.warn(short, LibreWarning, stacklevel=user_stacklevel())
        self.n_features_in_ = self.best_estimator_.n_features_in_
        if hasattr(self.best_estimator_, "feature_names_in_"):
            self.feature_names_in_ = self.best_estimator_.feature_names_in_
        return self

    @staticmethod
    def _say_fold(k, plan, result, scores, fold_seconds, started, workers) -> None:
        """The progress line of the inner task ``k``, just done."""
        logger.info(
            "LibreSearchCV: task %d/%d (fold %d, %d candidates) done in %.1f s; "
            "best fold score %.3f; %.0f s elapsed, about %.0f s left",
            k + 1,
            plan.n_splits,
            k + 1,
            len(plan.candidates),
            result["seconds"],
            np.max(scores[:, k], initial=-np.inf, where=~np.isnan(scores[:, k])),
            time.perf_counter() - started,
            time_left(fold_seconds, plan.n_splits - k - 1, workers),
        )

    def _forget_fit(self) -> None:
        """Drop what an earlier fit learned (attributes ending in "_"), so that a fit without
        refit, or on unnamed columns, leaves no model or names of other data behind."""
        for name in [n for n in vars(self) if n.endswith("_") and not n.startswith("_")]:
            delattr(self, name)

    def plan(self, X, y, sample_weight=None, groups=None) -> SearchPlan:
        """The inner CV ``fit`` runs, as data: the candidates (full LibreClassifier parameters,
        grid order), the folds and the scorer. A pipeline can run :meth:`SearchPlan.evaluate`
        per fold and group of candidates (as separate tasks) and pass the scores to
        :meth:`choose`; the result equals ``fit``'s.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            The training rows.
        y : array-like of shape (n_samples,)
            Their labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights; rows of weight 0 are left out of the folds.
        groups : array-like of shape (n_samples,), default=None
            Group labels for a group splitter given as ``cv``.

        Returns
        -------
        SearchPlan
        """
        validate_params(
            {name: getattr(self, name) for name in SEARCH_PARAMETERS},
            owner="LibreSearchCV",
            table=SEARCH_PARAMETERS,
            requirements=(),
        )
        # what the search passes on to its estimators is checked as the search's, by its name
        own = {"refine": self.refine} if self.refine is not None else {}
        if self.max_rules is not None and not isinstance(self.max_rules, (list, tuple)):
            own["max_rules"] = self.max_rules
        validate_params(own, owner="LibreSearchCV")
        X = pandas_frame(X)
        frame = as_frame(X)
        refuse_infinite(frame)
        declared_categorical(list(frame.columns), self.categorical_features, "LibreSearchCV")
        fixed = self._fixed_positive_class()
        owner = "LibreSearchCV" if self.positive_class is not None else "LibreClassifier"
        target = binary_target(y, fixed, frame.shape[0], owner, fitter="LibreSearchCV")
        # one class against the rest of several: the folds see the class mask, as the model
        # does (its classes are False and True)
        labels = target.positive if one_vs_rest(target.positive_class, fixed) else _labels(y)
        groups = _groups(groups, frame.shape[0])
        seed = self.seed_ = _seed(self.random_state)
        splitter = _splitter(self.cv, seed)
        # a cv of the caller's (index arrays, a PredefinedSplit) names rows by their positions
        # in X: it splits all rows, and the rows of weight 0 then leave its folds
        given = (
            None if _own_splitter(self.cv) else list(splitter.split(frame, target.positive, groups))
        )
        if sample_weight is not None:
            frame, target, keep = weighted_rows(frame, target, sample_weight, "LibreSearchCV")
            labels = labels[keep]
            groups = None if groups is None else groups[keep]
            given = None if given is None else _kept_splits(given, keep)
        base = self._base_params(target.positive_class)
        base["random_state"] = seed
        base["n_jobs"] = None
        candidates = self._candidates(base, int(target.positive.sum()), frame)
        if _own_splitter(self.cv):
            _refuse_small_classes(int(self.cv), target)
        with warnings.catch_warnings():  # a class below the folds: the fit's own warning says it
            warnings.filterwarnings("ignore", "The least populated class", UserWarning)
            splits = given or list(splitter.split(frame, target.positive, groups))
        _refuse_one_class_folds(splits, target)
        self.n_splits_ = len(splits)
        scorer = _scorer(self.scoring, target.positive_class)
        return SearchPlan(frame, labels, target.positive, candidates, splits, scorer, target.weight)

    def choose(self, plan: SearchPlan, scores, n_rules, n_atoms) -> int:
        """Set the search results from the inner CV's figures (candidates x folds arrays, as
        :meth:`SearchPlan.evaluate` gives them) and return the chosen candidate's index:
        the fewest mean rules within ``tolerance_`` of the best mean score.

        Parameters
        ----------
        plan : SearchPlan
            What :meth:`plan` returned on the same data.
        scores, n_rules, n_atoms : ndarray of shape (n_candidates, n_splits)
            Every candidate's validation score, rules and average atoms per fold.

        Returns
        -------
        int
            ``best_index_``.
        """
        scores, n_rules = np.asarray(scores, float), np.asarray(n_rules, float)
        self.cv_results_ = self._results(scores, n_rules, np.asarray(n_atoms, float))
        mean = _usable_means(scores, self.scoring)
        self.tolerance_ = resolve_tolerance(
            self.score_tolerance,
            self.standard_errors,
            mean,
            self.cv_results_["std_test_score"],
            plan.n_splits,
        )
        best = choose_candidate(mean, n_rules.mean(axis=1), self.tolerance_)
        self._set_choice(best)
        return best

    def choice_order(self) -> np.ndarray:
        """The candidates the choice rule accepts, in its order.

        Returns
        -------
        ndarray of int
            The indices (into ``cv_results_``) of the candidates whose mean score is within
            ``tolerance_`` of the best, ordered by fewest mean rules, then best mean score,
            then grid order: the first is the choice :meth:`choose` made.
        """
        mean = np.asarray(self.cv_results_["mean_test_score"], dtype=float)
        mean = np.where(np.isnan(mean), -np.inf, mean)  # as the choice ranks them
        return choice_order(mean, self.cv_results_["mean_n_rules"], self.tolerance_)

    def refit_order(self) -> np.ndarray:
        """The candidates :meth:`checked_refit` may refit, in its order.

        Returns
        -------
        ndarray of int
            The chosen candidate (``best_index_``) first; then, when it kept at least one rule
            in most inner folds (more than half), the rest of :meth:`choice_order` (the
            fallbacks should its refit keep no rule) and after them up to
            :data:`~libre_lib.estimator.BEYOND_TOLERANCE` candidates outside the tolerance that
            kept a rule in most inner folds, best mean score first (:func:`checked_order`).
            The pipeline's refit check follows the same order.
        """
        return checked_order(self.choice_order(), self.cv_results_)

    def _refit_point(
        self, plan: SearchPlan, index: int, X, y, sample_weight=None, learner_factor: int = 1
    ):
        """Candidate ``index`` of ``plan`` fitted on ``X, y`` as the refit fits it (with
        ``learner_factor`` times its learners: :meth:`more_learners_check`)."""
        refit = {**plan.candidates[index], "n_jobs": self.n_jobs}
        fixed = self._fixed_positive_class()
        if fixed is not None:  # the user's label, also when the folds saw the class mask
            refit["positive_class"] = fixed
        return LibreClassifier(**refit)._fit(X, y, sample_weight, learner_factor)

    def more_learners_check(
        self, model: LibreClassifier, said: list, fit_more, n_positive: float
    ) -> tuple:
        """The refit checked against the chosen point's mean inner F1 (the thirty-fifth
        round): when its training F1 is more than :data:`~libre_lib.estimator.BELOW_INNER`
        below ``best_score_``, the point is fitted again with each multiple of its
        ``n_estimators`` in :data:`~libre_lib.estimator.LEARNER_FACTORS` in turn, and the
        first within it is kept (its ``learner_factor_`` says which); otherwise ``model``
        stays.

        Parameters
        ----------
        model : LibreClassifier
            The refit (after :meth:`checked_refit`).
        said : list
            The warnings its fit gave, held back.
        fit_more : callable
            ``fit_more(factor)`` returns the chosen point fitted with ``factor`` times its
            learners.
        n_positive : float
            The refit rows' positive weight (their number, without sample weights).

        Returns
        -------
        tuple
            The model kept and the warnings its fit gave, held back.
        """
        if not falls_short(model.rules_, n_positive, self.best_score_):
            return model, said
        for factor in growing_factors(model):
            more, more_said = _fit_saying(fit_more, factor)
            if reaches(more.rules_, n_positive, self.best_score_):
                logger.info(
                    "LibreSearchCV: the refit scored a training F1 far below the chosen "
                    "point's mean inner F1 %.3f; refitted with %d x its learners",
                    self.best_score_,
                    factor,
                )
                return more, more_said
        return model, said

    def checked_refit(self, fit_point) -> LibreClassifier:
        """The chosen candidate refitted, checked against the inner CV that chose it.

        When the refit keeps no rule although the candidate kept at least one rule in most
        inner folds (the majority guard cut rules the inner folds mostly kept), the next
        candidates in :meth:`refit_order` (the rest of :meth:`choice_order`, then a few
        outside the tolerance) are refitted until one keeps a rule, and it becomes the choice
        (``best_index_``, ``best_params_``, ``best_score_``); if none does, the chosen
        candidate's empty model stays (docs/benchmarks.md, fourteenth, twenty-second and
        twenty-fifth rounds). Only the kept model's warnings are given.

        Parameters
        ----------
        fit_point : callable
            ``fit_point(index)`` returns candidate ``index`` fitted on the refit's rows.

        Returns
        -------
        LibreClassifier
            The refitted model; ``refit_fallbacks_`` counts the refits after the first.
        """
        model, index, self.refit_fallbacks_ = refit_in_choice_order(fit_point, self.refit_order())
        if index != self.best_index_:
            logger.info(
                "LibreSearchCV: the chosen candidate's refit kept no rule, although it kept rules "
                "in most inner folds; candidate %d (mean score %.3f) is refitted instead",
                index,
                self.cv_results_["mean_test_score"][index],
            )
            self._set_choice(index)
        return model

    def _set_choice(self, index: int) -> None:
        self.best_index_ = index
        self.best_params_ = dict(self._grid_points[index])
        self.fixed_params_ = dict(self._fixed_points[index])
        self.best_score_ = float(self.cv_results_["mean_test_score"][index])

    def _results(self, scores, n_rules, n_atoms) -> dict:
        mean = scores.mean(axis=1)
        results: dict = {"params": [dict(p) for p in self._grid_points]}
        for name in self._tuned_names:
            results[f"param_{name}"] = np.ma.MaskedArray(
                np.array([p.get(name) for p in self._grid_points], dtype=object),
                mask=[name not in p for p in self._grid_points],
            )
        for k in range(scores.shape[1]):
            results[f"split{k}_test_score"] = scores[:, k]
        for k in range(scores.shape[1]):
            results[f"split{k}_n_rules"] = n_rules[:, k]
        results["mean_test_score"] = mean
        results["std_test_score"] = scores.std(axis=1)
        # sklearn convention: equal means share the best rank; NaN means rank last
        ranked = np.where(np.isnan(mean), -np.inf, mean)
        results["rank_test_score"] = (
            pd.Series(ranked).rank(method="min", ascending=False).to_numpy(dtype=np.int32)
        )
        results["mean_n_rules"] = n_rules.mean(axis=1)
        results["mean_n_atoms"] = n_atoms.mean(axis=1)
        return results

    # -- delegation to the refitted model -----------------------------------------------------

    def _refitted(self) -> LibreClassifier:
        """``best_estimator_``; a ``NotFittedError`` that says why when there is none."""
        if hasattr(self, "cv_results_") and not hasattr(self, "best_estimator_"):
            raise NotFittedError(
                "This LibreSearchCV was fitted with refit=False: it holds the search's results "
                "(cv_results_, best_params_) but no model to predict with; fit it with "
                "refit=True to get one (best_estimator_)."
            )
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_

    @property
    def rules_(self):
        return self._refitted().rules_

    @property
    def classes_(self):
        return self._refitted().classes_

    @property
    def positive_class_(self):
        return self._refitted().positive_class_

    def predict(self, X) -> np.ndarray:
        """The positive label where a rule of the best model fires, the negative one elsewhere.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            The columns seen in fit (see :meth:`LibreClassifier.predict`).

        Returns
        -------
        ndarray of shape (n_samples,)
            One label of ``classes_`` per row.
        """
        return self._refitted().predict(X)

    def decision_function(self, X) -> np.ndarray:
        """The best model's scores (:meth:`LibreClassifier.decision_function`).

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            The columns seen in fit (see :meth:`LibreClassifier.predict`).

        Returns
        -------
        ndarray of shape (n_samples,)
            The precision of the most precise rule that fires, -1 where none fires; negated
            when the positive class is ``classes_[0]``, so > 0 means ``classes_[1]``.
        """
        return self._refitted().decision_function(X)

    def predict_proba(self, X) -> np.ndarray:
        """The best model's class probabilities (:meth:`LibreClassifier.predict_proba`).

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            The columns seen in fit (see :meth:`LibreClassifier.predict`).

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        return self._refitted().predict_proba(X)

    def predict_log_proba(self, X) -> np.ndarray:
        """The best model's :meth:`LibreClassifier.predict_log_proba`.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            The columns seen in fit (see :meth:`LibreClassifier.predict`).

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_``; ``-inf`` where a probability is 0.
        """
        return self._refitted().predict_log_proba(X)

    def score(self, X, y, sample_weight=None) -> float:
        """The search's own metric for the best model on ``X``, ``y``, as scikit-learn's
        searches score: ``scoring`` (by default the F1 of the positive class, which chose
        the model), not accuracy. For accuracy, ``best_estimator_.score``.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            The rows to predict.
        y : array-like of shape (n_samples,)
            Their labels (a one-column frame too); for one class against the rest, the labels
            of every class (compared as ``y == positive_class``) or the model's own classes,
            True and False.
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights, passed to a scorer of ``scoring`` as the search's validation passes
            them.

        Returns
        -------
        float
        """
        model = self._refitted()
        labels = _labels(y)
        if one_vs_rest(model.positive_class_, model.positive_class):
            labels = one_vs_rest_labels(labels, model.positive_class)
        weight = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        n_rows = np.shape(X)[0]
        if len(labels) != n_rows or (weight is not None and len(weight) != len(labels)):
            raise ParameterError(
                f"score got {n_rows} rows of X, {len(labels)} labels"
                + ("" if weight is None else f" and {len(weight)} weights")
                + ": give one of each per row."
            )
        scorer = _scorer(self.scoring, model.positive_class_)
        if scorer is not None:
            extra = {} if weight is None else {"sample_weight": weight}
            return float(scorer(model, X, labels, **extra))
        truth = np.asarray(labels, dtype=object) == model.positive_class_
        return float(f1_score(truth, model.fired_rules(X).any(axis=1), weight))

    def fired_rules(self, X) -> np.ndarray:
        """Which rule of the best model fires on which row (:meth:`LibreClassifier.fired_rules`).

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            The columns seen in fit (see :meth:`LibreClassifier.predict`).

        Returns
        -------
        ndarray of bool, shape (n_samples, n_rules)
            Column ``i`` is ``best_estimator_.rules_[i]``.
        """
        return self._refitted().fired_rules(X)

    def explain(self, X) -> pd.DataFrame:
        """Why the best model answers as it does on each row (:meth:`LibreClassifier.explain`).

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            The columns seen in fit (see :meth:`LibreClassifier.predict`).

        Returns
        -------
        DataFrame
            One row per input row, as :meth:`LibreClassifier.explain` (0-based rule positions).
        """
        return self._refitted().explain(X)

    def to_sql(self, missing_values=None) -> str:
        """The best model's rule set as a boolean SQL expression.

        Parameters
        ----------
        missing_values : dict, optional
            Per column, the values that stand for a missing value (see
            :meth:`LibreClassifier.to_sql`).

        Returns
        -------
        str
            See :meth:`LibreClassifier.to_sql`.
        """
        return self._refitted().to_sql(missing_values)

    def to_json(self, indent: int | None = 2) -> str:
        """The best model as JSON.

        Parameters
        ----------
        indent : int or None, default=2
            Passed to ``json.dumps``.

        Returns
        -------
        str
            ``LibreClassifier.from_json`` restores the model from it.
        """
        return self._refitted().to_json(indent)


# -- the inner CV ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchPlan:
    """The inner CV of one search: the training rows, their labels and positive mask, the
    candidates (full LibreClassifier parameters) and the folds (train, validation indices);
    ``weight``: the rows' sample weights (None: all 1)."""

    frame: pd.DataFrame
    labels: np.ndarray
    positive: np.ndarray
    candidates: list[dict]
    splits: list[tuple[np.ndarray, np.ndarray]]
    scorer: object = None
    weight: np.ndarray | None = None

    @property
    def n_splits(self) -> int:
        return len(self.splits)

    def evaluate(self, fold: int, indices) -> dict:
        """Score the candidates at ``indices`` on fold ``fold``: ``results`` (one (score,
        rules, atoms) triple per index) and ``seconds``. A candidate's figures do not depend on
        which others share the call; sharing only saves work."""
        chosen = [self.candidates[i] for i in indices]
        return _evaluate(
            self.frame,
            self.labels,
            self.positive,
            self.splits[fold],
            chosen,
            self.scorer,
            self.weight,
        )

    def bin_cap_groups(self) -> dict:
        """Candidate indices by ``max_intervals``, in grid order: the unit of work of a mapped
        search. (ChiMerge thresholds often give the same bins under one cap, and candidates
        evaluated together share them, so splitting by threshold would repeat work.)"""
        groups: dict = {}
        for i, params in enumerate(self.candidates):
            groups.setdefault(params["max_intervals"], []).append(i)
        return groups


def _evaluate(frame, labels, positive, split, candidates, scorer, weight=None) -> dict:
    """Score ``candidates`` on one train/validation split (``weight``: the rows' sample
    weights, in training and in the validation score).

    Runs LibreClassifier's stages with every shareable result reused; each candidate ends in
    exactly the state ``LibreClassifier(**params).fit(train)`` would produce. The candidates
    are visited in the groups of :func:`_share_groups`, and a group's learners, union, cover
    problem and evaluated rules are dropped once its candidates are scored: the memory held is
    one discretization's rules, one learner setting's learners, one union and one cover problem
    at a time, whatever the grid. (Grid order varies ``alpha`` slowest, so keeping them for the
    grid's order held every cover problem of the fold at once.) Candidates that differ only
    in ``max_rules`` share one set cover: the greedy cover capped at ``k`` rules is the first
    ``k`` rules of the uncapped one, so it runs once (up to the largest cap of the task) and
    every candidate is scored on its prefix.
    """
    started = time.perf_counter()
    train, test = split
    X_train = frame.iloc[train]
    held_out = None if weight is None else weight[test]
    validation = _Validation(frame.iloc[test], labels[test], positive[test], scorer, held_out)
    caps = [params["max_rules"] for params in candidates]
    largest = None if any(c is None for c in caps) else max(caps)
    out: list = [None] * len(candidates)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        target, discretizations, groups = _share_groups(
            X_train, labels[train], candidates, None if weight is None else weight[train]
        )
        n_positive, n_negative = target.totals() if target is not None else (0.0, 0.0)
        for did, by_learner in groups.items():
            disc, records = discretizations[did]
            # rules and atoms of another discretization rarely recur: keep one's at a time
            validation.forget()
            point_rules: dict = {}  # point bytes -> Rule of this discretization
            for learner, by_subsets in by_learner.items():
                setting = dict(zip(_LEARNERS, learner, strict=True))
                learned: dict = {}  # subset -> Candidates of this discretization and setting
                ordered = disc.ordered_bins() if setting["contiguous"] else None
                for subsets, by_filter in by_subsets.items():
                    for subset in subsets:
                        if subset not in learned:
                            learned[subset] = learn_subset(
                                records,
                                disc.n_bins,
                                subset,
                                setting["heuristic"],
                                setting["seeds"],
                                setting["conflict_tolerance"],
                                ordered=ordered,
                            )
                    union = union_candidates([learned[s] for s in subsets], int(disc.n_bins.sum()))
                    for (top_k, min_local_support), members in by_filter.items():
                        # the filter and the cover problem are shared by every alpha and cap
                        filtered = filter_for_cover(
                            union, records, disc.n_bins, top_k, float(min_local_support)
                        )
                        covers: dict = {}  # alpha -> its cover, rules and scores per cap
                        for i in members:
                            params = candidates[i]
                            alpha = params["alpha"]
                            if alpha not in covers:
                                selection = cover_filtered(
                                    filtered, records, disc.n_bins, _gain(alpha), largest
                                )
                                covers[alpha] = {"selection": selection, "scores": {}}
                            cover = covers[alpha]
                            full = cover["selection"]
                            n_chosen = full.indices.size
                            cap = params["max_rules"]
                            k = n_chosen if cap is None else min(cap, n_chosen)
                            if params["abstain"]:  # what assemble keeps of this prefix
                                k = majority_prefix(full.stats[:k], n_positive, n_negative)
                            if k in cover["scores"]:
                                out[i] = cover["scores"][k]
                                continue
                            if scorer is None:
                                # what fit + predict give (a rule fires -> positive): the cover's
                                # rules are built and evaluated once (every cap is a prefix)
                                if "rules" not in cover:
                                    cover["rules"] = [
                                        _rule(point, disc, point_rules)
                                        for point in union.points[full.indices]
                                    ]
                                    cover["fired"] = [validation.fires(r) for r in cover["rules"]]
                                cover["scores"][k] = validation.rules_score(
                                    cover["rules"][:k], cover["fired"][:k]
                                )
                            else:
                                prefix = Selection(
                                    full.indices[:k],
                                    full.stats[:k],
                                    full.n_candidates,
                                    full.n_filtered,
                                )
                                clf = LibreClassifier(**params)
                                clf.assemble(X_train.columns, target, disc, subsets, union, prefix)
                                cover["scores"][k] = validation.model_score(clf)
                            out[i] = cover["scores"][k]
    return {"results": out, "seconds": time.perf_counter() - started}


def _share_groups(X_train, train_labels, candidates, weight=None):
    """What ``candidates`` share on one training fold.

    Returns the training target, the distinct discretizations (discretization, encoded records;
    thresholds that give the same bins share one) and the candidates' indices grouped as
    discretization id -> learner setting -> the learners' subsets -> (top_k,
    min_local_support), every level in order of first appearance: the candidates of a group
    share its rules, then its learners, then their union, then the filtered cover problem.
    """
    target = binary_target(train_labels, candidates[0]["positive_class"]) if candidates else None
    if target is not None and weight is not None:
        target = Target(target.positive, target.classes, target.positive_class, weight)
    counts = None  # the columns' class counts on this fold, shared by every discretization
    by_params: dict = {}  # discretization params -> id
    by_content: dict = {}  # discretization content -> id
    discretizations: list = []  # id -> (discretization, records)
    drawn: dict = {}  # (discretization id, n_estimators, max_features, subset_sizes) -> subsets
    groups: dict = {}
    for i, params in enumerate(candidates):
        clf = LibreClassifier(**params)
        dkey = tuple(params[k] for k in _DISCRETIZATION)
        if dkey not in by_params:
            if counts is None:  # the same for every point: categorical_features is not tuned
                counts = clf.count_classes(X_train, target)
            disc = clf.discretize(X_train, target, counts=counts)
            content = repr(disc.to_dict())
            if content not in by_content:
                by_content[content] = len(discretizations)
                discretizations.append((disc, clf.encode(X_train, target, disc)))
            by_params[dkey] = by_content[content]
        did = by_params[dkey]
        draw = (did, params["n_estimators"], *(params[k] for k in _LEARNERS[:2]))
        if draw not in drawn:
            drawn[draw] = tuple(clf.draw_subsets(discretizations[did][0]))
        learner = tuple(params[k] for k in _LEARNERS)
        by_subsets = groups.setdefault(did, {}).setdefault(learner, {})
        by_filter = by_subsets.setdefault(drawn[draw], {})
        by_filter.setdefault((params["top_k"], params["min_local_support"]), []).append(i)
    return target, discretizations, groups


class _Validation:
    """The validation rows of one split, with every rule and atom (condition) evaluated on
    them once until :meth:`forget`; rules are frozen value objects and share atoms. The rows
    a rule or atom holds on are kept bit-packed (8 per byte): on magic a fold evaluates
    about 47,000 distinct atoms."""

    def __init__(self, X, labels, truth, scorer, weight=None):
        self.X = X
        self.labels = labels
        self.truth = truth
        self.scorer = scorer
        self.weight = weight
        self.forget()

    def forget(self) -> None:
        """Drop the evaluated rules and atoms."""
        self.fired: dict = {}  # rule -> packed validation rows it fires on
        self.atoms: dict = {}  # condition -> packed validation rows it holds on

    def fires(self, rule) -> np.ndarray:
        """Packed rows ``rule`` fires on: ``rule.evaluate(X)``, from the atoms' packed rows."""
        if rule not in self.fired:
            hit = np.packbits(np.ones(len(self.truth), dtype=bool))
            for condition in rule:
                if condition not in self.atoms:
                    held = condition.evaluate(self.X[condition.feature])
                    self.atoms[condition] = np.packbits(held)
                hit &= self.atoms[condition]
            self.fired[rule] = hit
        return self.fired[rule]

    def rules_score(self, rules, fired) -> tuple[float, int, float]:
        """(F1 of the positive class, rules, mean atoms) of predicting positive where a rule
        fires, as fit + predict would; ``fired``: the rules' :meth:`fires`."""
        pred = np.zeros(-(-len(self.truth) // 8), dtype=np.uint8)
        for rows in fired:
            pred |= rows
        covered = np.unpackbits(pred, count=len(self.truth)).astype(bool)
        atoms = float(np.mean([len(r) for r in rules])) if rules else 0.0
        return f1_score(self.truth, covered, self.weight), len(rules), atoms

    def model_score(self, clf) -> tuple[float, int, float]:
        """(score, rules, atoms) of a fitted LibreClassifier under the search's scorer."""
        if self.weight is None:
            score = float(self.scorer(clf, self.X, self.labels))
        else:
            score = float(self.scorer(clf, self.X, self.labels, sample_weight=self.weight))
        return score, len(clf.rules_), clf.rules_.n_atoms


def _rule(point: np.ndarray, disc, cache: dict):
    """``rule_from_point(point, disc)``, cached per point (``cache`` serves one
    discretization)."""
    key = point.tobytes()
    if key not in cache:
        cache[key] = rule_from_point(point, disc)
    return cache[key]


def _labels(y) -> np.ndarray:
    """``y`` as a 1-D numpy array of one dtype (as :func:`~libre_lib.inputs.label_array`
    gives the model's ``classes_``), so that scikit-learn scorers see the type of target."""
    if isinstance(y, pd.DataFrame):
        y = y.iloc[:, 0]
    values = np.asarray(y)
    values = values.ravel() if values.ndim == 2 and values.shape[1] == 1 else values
    return label_array(values) if values.dtype == object else values


def checked_order(order, results: dict, pool=None) -> np.ndarray:
    """``order`` (candidates in the choice's order, the choice first) as the refit check follows
    it, with the inner folds' rule counts of ``results`` (``cv_results_``, its
    ``split<k>_n_rules``): :func:`~libre_lib.estimator.refit_order`, among the candidates of
    ``pool`` (default: all)."""
    return refit_order(
        order,
        results["mean_test_score"],
        results["mean_n_rules"],
        (_split_matrix(results, "n_rules") >= 1).mean(axis=1),
        pool,
    )


def _split_matrix(results: dict, name: str) -> np.ndarray:
    """``split<k>_<name>`` of ``cv_results_`` as a candidates x splits array."""
    k = 0
    columns = []
    while f"split{k}_{name}" in results:
        columns.append(np.asarray(results[f"split{k}_{name}"], dtype=float))
        k += 1
    return np.stack(columns, axis=1)


def _usable_means(scores: np.ndarray, scoring) -> np.ndarray:
    """The candidates' mean validation scores, a NaN mean (a scorer undefined on some fold,
    e.g. roc_auc on a fold of one class) as -inf so that it is never chosen, with a warning;
    a :class:`ParameterError` when every mean is NaN."""
    mean = scores.mean(axis=1)
    failed = np.isnan(mean)
    if failed.all():
        raise ParameterError(
            f"Every candidate's validation score is NaN with scoring={scoring!r}: the scorer is "
            "undefined on the folds (e.g. roc_auc on a fold holding one class). Use stratified, "
            "shuffled folds (cv=5) or another scoring."
        )
    if failed.any():
        warnings.warn(
            f"{int(failed.sum())} of the {mean.size} candidates have a NaN validation score "
            f"with scoring={scoring!r} (undefined on some fold); they rank last and are never "
            "chosen.",
            LibreWarning,
            stacklevel=user_stacklevel(),
        )
    return np.where(failed, -np.inf, mean)


def _groups(groups, n_rows: int) -> np.ndarray | None:
    """``groups`` as a 1-D array, one label per row (None stays None)."""
    if groups is None:
        return None
    values = np.asarray(groups)
    if values.ndim != 1 or values.shape[0] != n_rows:
        raise ParameterError(
            f"The 'groups' parameter of LibreSearchCV.fit must hold one label per row of X "
            f"({n_rows}). Got shape {values.shape} instead."
        )
    return values


#: Scorers of one class's figure: named as a string, they score the positive class (the
#: rules' class), not scikit-learn's default ``pos_label=1``.
_ONE_CLASS_SCORERS = {
    "precision": (precision_score, "predict"),
    "recall": (recall_score, "predict"),
    "jaccard": (jaccard_score, "predict"),
    "average_precision": (average_precision_score, ("decision_function", "predict_proba")),
}


def _library_grid(grid) -> bool:
    """Whether ``grid`` is None, a :class:`LibraryGrid` or ``PAPER_GRID`` (a copy of it too):
    they leave "auto" parameters to :data:`~libre_lib.estimator.AUTO_FALLBACK` by design."""
    if grid is None or isinstance(grid, LibraryGrid):
        return True
    try:
        return bool(grid == PAPER_GRID)
    except (TypeError, ValueError):  # values that do not compare (numpy arrays)
        return False


def _scorer(scoring, positive_class):
    """The validation scorer: None for the built-in F1 of the positive class, else a
    scikit-learn scorer; the one-class scorers named as strings score ``positive_class``."""
    if isinstance(scoring, list | tuple | set | dict):
        raise ParameterError(
            f"The 'scoring' parameter of LibreSearchCV is a {type(scoring).__name__}: the search "
            "chooses by one score, so it takes one metric (a str, a callable or None), not "
            "GridSearchCV's multi-metric scoring. To compare other metrics, score "
            "best_estimator_ on held-out rows with sklearn.metrics."
        )
    if isinstance(scoring, str) and scoring == "f1":
        return None
    if isinstance(scoring, str) and scoring in _ONE_CLASS_SCORERS:
        metric, response = _ONE_CLASS_SCORERS[scoring]
        return make_scorer(metric, response_method=response, pos_label=positive_class)
    return check_scoring(LibreClassifier(), scoring)


def _refuse_small_classes(n_folds: int, target) -> None:
    """A clear error when no class has as many rows as the stratified folds (scikit-learn's
    splitter fails with "n_splits=5 cannot be greater than the number of members in each
    class"); a smaller class is its warning, and one row of a class the next check's error."""
    positives = int(target.positive.sum())
    negatives = int(target.positive.shape[0] - positives)
    if max(positives, negatives) < n_folds:
        raise DataError(
            f"The training rows hold {counted(positives, 'row')} of the positive class "
            f"{target.positive_class!r} and {negatives} of the negative class: LibreSearchCV's "
            f"inner cross-validation cuts them into {n_folds} stratified folds, which needs "
            f"more rows. Give it more rows, a smaller cv (tuning.folds in a pipeline spec), "
            "or fit LibreClassifier without a search (tuning: {enabled: false} in a spec)."
        )


def _refuse_one_class_folds(splits, target) -> None:
    """A clear error when an inner fold's training rows hold one class only (a class of fewer
    rows than the folds need), instead of that fold's fit failing on "y has one class"."""
    for k, (train, _) in enumerate(splits):
        present = target.positive[train]
        if present.any() and not present.all():
            continue
        if present.any():
            absent, count = "the negative class", int((~target.positive).sum())
        else:
            absent = f"the positive class {target.positive_class!r}"
            count = int(target.positive.sum())
        smaller = (
            ", a smaller cv (tuning.folds in a pipeline spec)" if count > 1 else ""
        )  # one row of a class leaves the training rows of the fold that holds it out
        raise DataError(
            f"The training rows of inner fold {k + 1} of {len(splits)} hold no row of {absent} "
            f"({count:,} in y): LibreSearchCV's inner cross-validation needs both classes in "
            f"every training fold. Give it more rows of that class{smaller}, or fit "
            "LibreClassifier without a search (tuning: {enabled: false} in a spec)."
        )


def _own_splitter(cv) -> bool:
    """Is ``cv`` a number of folds (the search's own stratified splitter)?"""
    return isinstance(cv, numbers.Integral) and not isinstance(cv, bool)


def time_left(fold_seconds: Sequence[float], folds_left: int, workers: int) -> float:
    """Seconds the ``folds_left`` inner folds should take, ``workers`` at a time, at the mean
    time of the folds done (``fold_seconds``); the folds running are counted whole. (Elapsed
    time per fold done overstated it by the number of workers: two folds end together.)"""
    return float(np.mean(fold_seconds)) * folds_left / max(1, workers) if fold_seconds else 0.0


def _kept_splits(splits: list, keep: np.ndarray) -> list:
    """``splits`` of all rows as positions among the ``keep`` rows, the others left out; a
    fold left without training or validation rows is refused."""
    position = np.cumsum(keep) - 1
    kept = []
    for k, (train, test) in enumerate(splits):
        train, test = np.asarray(train), np.asarray(test)
        train, test = position[train[keep[train]]], position[test[keep[test]]]
        if not (train.size and test.size):
            which = "training" if not train.size else "validation"
            raise ParameterError(
                f"The {which} rows of fold {k + 1} of the 'cv' parameter of LibreSearchCV all "
                "have sample_weight 0: every fold needs rows of weight > 0 on both sides."
            )
        kept.append((train, test))
    return kept


def _splitter(cv, seed: int):
    if _own_splitter(cv):
        if cv < 2:
            raise ParameterError(f"The 'cv' parameter of LibreSearchCV must be >= 2. Got {cv}.")
        return StratifiedKFold(n_splits=int(cv), shuffle=True, random_state=seed)
    return check_cv(cv, classifier=True)


__all__ = [
    "CONFLICT_TOLERANCES",
    "DEFAULT_GRID",
    "EARLY_STOP",
    "LARGE_DATA_GRID",
    "LARGE_DATA_POSITIVES",
    "PAPER_GRID",
    "SELECTION_FILTERS",
    "LibreSearchCV",
    "caps_bins",
    "choose_candidate",
    "default_grid",
    "resolve_tolerance",
    "thins_cuts",
]
