"""``LibreClassifier``: the scikit-learn estimator wrapping the whole LIBRE method."""

from __future__ import annotations

import copy
import json
import logging
import numbers
import os
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import replace
from itertools import product

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.validation import check_is_fitted, check_random_state

from ._version import __version__
from .discretization import (
    CATEGORICAL,
    ColumnCounts,
    Discretization,
    discretization_from_counts,
    frame_counts,
    identifier_messages,
)
from .encoding import DistinctRecords, distinct_records
from .ensemble import Candidates, draw_feature_subsets, fit_ensemble, tolerance_fits
from .errors import (
    DataError,
    LibreWarning,
    ModelFormatError,
    ParameterError,
    SchemaError,
    counted,
    excerpt,
    user_stacklevel,
)
from .inputs import (
    Target,
    as_frame,
    binary_target,
    check_sample_weight,
    duplicate_columns,
    duplicate_columns_message,
    is_usual_marker,
    label_array,
    misread_text_columns,
    one_vs_rest,
    one_vs_rest_labels,
    pandas_frame,
    python_scalar,
    refuse_infinite,
    resolve_categorical,
    warn_reordered,
    warn_spelled_alike,
)
from .params import AUTO, validate_params
from .progress import Heartbeat, progress_on_stderr
from .render import rule_from_dict, rule_to_dict, ruleset_sql
from .rules import (
    RuleSet,
    fired_patterns,
    fired_text,
    name_text,
    rules_from_points,
    tested_columns,
)
from .selection import (
    F1_GAIN,
    OBJECTIVES,
    Selection,
    cover_filtered,
    filter_for_cover,
    majority_prefix,
    refine_rules,
    rule_stats,
    select_rules,
)

logger = logging.getLogger(__name__)

MODEL_FORMAT = "libre-flows/model"
MODEL_FORMAT_VERSION = 2
#: Format 1 listed ``classes`` as [negative, positive]; format 2 sorts them as ``np.unique`` does.
READABLE_FORMAT_VERSIONS = (1, 2)

#: A predict call on at least this many rows warns about a column the rules test in which no
#: row has a value seen in fit (:meth:`LibreClassifier.fired_rules`) ...
UNMATCHED_MIN_ROWS = 10
#: ... naming this many of its categories.
UNMATCHED_EXAMPLES = 5
#: The least ``decision_function`` gives a row some rule fires on (a rule of training
#: precision 0, as a hand-written model may hold, must not read as "no rule fires").
_SMALLEST_SCORE = 1e-12

#: Parameters that say how a fit runs, not what it learns ("Results do not depend on it"):
#: :meth:`LibreClassifier.to_dict` saves them as these defaults. (``verbose`` is saved as
#: given: the pipeline's models save 0, and their bytes name their registered versions.)
RUN_PARAMS = {"n_jobs": None}

#: What ``max_intervals="auto"`` chooses from: ChiMerge capped at 3 intervals, or uncapped
#: (on at most :data:`AUTO_UNCAPPED_ROWS` rows).
AUTO_INTERVALS = (3, None)
#: Rows above which ``max_intervals="auto"`` means the cap: uncapped bins keep many intervals on
#: every noisy numeric column, so the records stop compressing and the fit's cost grows with the
#: rows (10 numeric columns: 50,000 rows 17-33 s instead of 2 s, 200,000 rows 114 s instead of
#: 3 s). Every development dataset's training folds are below it (bank 36k, adult 39k rows).
AUTO_UNCAPPED_ROWS = 50_000
#: Rows above which the uncapped bins ``max_intervals="auto"`` tries keep only significant cut
#: points (``significant_cuts``): uncapped ChiMerge keeps 15-25 intervals on every noisy numeric
#: column, and the fit's cost grows with the rows (the thirty-sixth round of
#: docs/benchmarks.md: the default search took 636 s on 48,000 noisy rows, against 20 s above
#: :data:`AUTO_UNCAPPED_ROWS`). Among the development datasets, magic, adult and bank are
#: above it.
AUTO_SIGNIFICANT_ROWS = 10_000
#: What ``alpha="auto"`` chooses from (the paper's search grid).
AUTO_ALPHAS = (0.5, 0.7, 0.9)
#: What ``conflict_tolerance="auto"`` chooses from (H1 with uncovered seeds; else 0).
AUTO_TOLERANCES = (0.0, 0.5)
#: The "auto" choice's rule: the fewest rules within max(score_tolerance, standard_errors x
#: the best's standard error) of the best mean F1, as (score_tolerance, standard_errors). The
#: search dropped its 0.01 floor in the eighth study round; here dropping it changed nothing
#: on the design half (docs/benchmarks.md), so it stays.
AUTO_CHOICE = (0.01, 1.0)
#: What ``max_rules="auto"`` chooses from: early stops of the set cover, each about 1.6x the
#: previous; the search's default grid uses the same ones. Free to validate: every stop is a
#: prefix of one cover. No "no stop": uncapped ChiMerge bins on many numeric columns let the
#: inner F1 creep up with every rule (magic: 72 rules for .006 F1 on the design half,
#: docs/benchmarks.md). They end at 8 since the twenty-first study round (21 went in the
#: tenth, 13 in the twenty-first, each by non-inferiority on the design half): a default rule
#: set has at most 8 rules.
AUTO_STOPS = (1, 2, 3, 5, 8)
#: The "auto" parameters' values when no choice is made (too few rows of a class to validate,
#: or a model assembled from stages without one): the paper's learner (no tolerance) and its
#: selection without an early stop, with alpha 0.5 (the lowest of the paper's grid; this
#: library's choice), on ChiMerge bins capped at 3 intervals (the paper's ChiMerge is
#: uncapped: ``max_intervals=None``).
AUTO_FALLBACK = {"max_intervals": 3, "conflict_tolerance": 0.0, "alpha": 0.5, "max_rules": None}
#: The parameters "auto" may choose, in the order their combinations are scored.
AUTO_CHOSEN = tuple(AUTO_FALLBACK)
#: A class of fewer training rows than this draws a warning: its rules describe those rows.
RARE_CLASS_ROWS = 10
#: Inner folds of the "auto" choice (fewer from :data:`AUTO_LARGE` rows on).
AUTO_FOLDS, AUTO_FOLDS_LARGE, AUTO_LARGE = 5, 3, 20_000
#: Sample weights averaging below this draw a warning: a row of weight w counts as w rows, so
#: weights normalized to sum to 1 leave ChiMerge and the set cover almost no evidence.
LIGHT_WEIGHTS = 0.1
#: A rule whose training precision is below this multiple of the base rate (or below halfway
#: from the base rate to 1, when that is lower: a majority positive class) draws a warning.
WEAK_LIFT = 1.2
#: A fit whose training F1 is this far below its "auto" choice's mean inner validation F1
#: draws a warning (training F1 is normally the higher of the two).
BELOW_INNER = 0.1
#: The multiples of ``n_estimators`` a fit that far below is fitted again with, in turn
#: (the thirty-fifth study round): the first subsets drawn are the same, so a larger
#: ensemble only adds learners.
LEARNER_FACTORS = (2, 4)


def libre_tags(tags):
    """scikit-learn tags of LIBRE estimators: raw DataFrames with strings, categories and NaN;
    binary only."""
    tags.input_tags.allow_nan = True
    tags.input_tags.string = True
    tags.input_tags.categorical = True
    tags.classifier_tags.multi_class = False
    tags.classifier_tags.poor_score = True
    return tags


def exact_column(rules: RuleSet, frame: pd.DataFrame, n_positive: float) -> str | None:
    """The column of the rule set's only condition when that condition alone tells the classes
    apart exactly on the training rows ``frame`` (``n_positive`` of them positive) and the
    column holds two values: the target itself, or a recoding of it, left among the features
    (``IF target ∈ {1}``). A threshold on a column of many values that happens to separate the
    classes is not named."""
    if len(rules) != 1 or len(rules.rules[0]) != 1 or not rules.stats:
        return None
    (stats,) = rules.stats
    if stats.negatives > 0 or not np.isclose(stats.positives, n_positive):
        return None
    column = rules.rules[0].conditions[0].feature
    if column not in frame.columns or frame[column].nunique(dropna=True) > 2:
        return None
    return column


#: A rule of one condition whose training F1 reaches this names its column as a possible leak
#: of the target (no LibreClassifier() rule on the 15 bundled datasets reaches 0.86), when
#: each class has at least :data:`NEAR_EXACT_MIN_ROWS` training rows (on a few dozen rows a
#: threshold separates the classes by chance, and toy data are made so).
NEAR_EXACT_F1 = 0.98
NEAR_EXACT_MIN_ROWS = 50


def telling_rule(
    rules: RuleSet, frame: pd.DataFrame, n_positive: float, class_rows: tuple | None = None
) -> tuple[int, float] | None:
    """The rule of one condition that alone (nearly) tells the training rows' classes apart,
    as (its index, its training F1), or None: exactly (:func:`exact_column`), or nearly, a
    rule of one condition whose training F1 is at least :data:`NEAR_EXACT_F1` (the target plus
    noise, a copy of it with a few rows changed: columns computed from the target), with
    :data:`NEAR_EXACT_MIN_ROWS` rows of each class or more (``class_rows``: the rows of each
    class, unweighted, when ``n_positive`` is a total of weights)."""
    if exact_column(rules, frame, n_positive) is not None:
        return 0, 1.0
    positives, negatives = class_rows or (n_positive, len(frame) - n_positive)
    if min(positives, negatives) < NEAR_EXACT_MIN_ROWS:
        return None
    found = None
    for index, (rule, stats) in enumerate(zip(rules.rules, rules.stats, strict=False)):
        if len(rule) != 1 or n_positive <= 0 or stats.positives <= 0:
            continue
        precision, recall = stats.precision, stats.positives / n_positive
        f1 = 2 * precision * recall / (precision + recall)
        if f1 >= NEAR_EXACT_F1 and (found is None or f1 > found[1]):
            found = (index, f1)
    return found


def exact_column_message(rules: RuleSet, remedy: str, found: tuple[int, float] = (0, 1.0)) -> str:
    """What :func:`telling_rule` ``found``, and ``remedy``: how to leave the column out."""
    index, f1 = found
    rule = rules.rules[index]
    column = rule.conditions[0].feature
    apart = (
        "tells the classes apart exactly"
        if f1 >= 1.0
        else f"nearly tells the classes apart (F1 {f1:.3f})"
    )
    return (
        f"Column {column!r} alone {apart} on the training rows (rule: {rule}): check that it "
        f"is not the target, or computed from it, left among the features ({remedy}). If it "
        "is a real cause, ignore this."
    )


def _warn_duplicate_columns(frame: pd.DataFrame) -> None:
    """Warn of columns that repeat another (:func:`~libre_lib.inputs.duplicate_columns`)."""
    pairs = duplicate_columns(frame)
    if pairs:
        copies = [copy for _, copy in pairs]
        warnings.warn(
            duplicate_columns_message(pairs, f"X.drop(columns={copies!r})"),
            LibreWarning,
            stacklevel=user_stacklevel(),
        )


def with_missing_params(cls: type, state: dict) -> dict:
    """The pickled state of a ``cls`` saved by an earlier release, with the constructor
    parameters it did not have yet at their defaults, said in a warning (``repr``, ``clone``,
    ``fit`` and ``to_json`` failed on such a model while ``predict`` worked)."""
    import inspect

    parameters = inspect.signature(cls.__init__).parameters
    missing = {
        name: parameters[name].default
        for name in cls._get_param_names()
        if name not in state and parameters[name].default is not inspect.Parameter.empty
    }
    if not missing:
        return state
    warnings.warn(
        f"This {cls.__name__} was saved by an earlier release of libre-flows, before the "
        f"parameters {', '.join(f'{k}={v!r}' for k, v in missing.items())}: they take these "
        "defaults. Its rules predict as before; a refit may learn other rules than that release "
        "did.",
        LibreWarning,
        stacklevel=3,
    )
    return {**state, **missing}


class LibreClassifier(ClassifierMixin, BaseEstimator):
    """Learn a small set of IF-THEN rules for one positive class (LIBRE, Mita et al. 2020).

    ``fit`` checks the parameters against :data:`libre_lib.params.LIBRE_PARAMETERS`. By
    default four parameters are chosen by one inner cross-validation on the training rows
    (``alpha``, ``max_intervals``, ``max_rules``, ``conflict_tolerance``: see
    :meth:`choose_auto`); these defaults were chosen on the design half of the development
    datasets and confirmed on the other half (docs/benchmarks.md, "Design study").

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
    alpha : float in [0, 1], "f1" or "auto", default="auto"
        Weight of new positives against new negatives in the weighted set cover (section 3.3):
        a rule joins while its new positives are more than ``(1 - alpha) / alpha`` times its new
        negatives, i.e. its marginal precision exceeds ``1 - alpha``. 0.5 accepts only rules
        that make the rule set more accurate on its training data; the paper tunes 0.5, 0.7 and
        0.9 (its Appendix C uses 0.7). "auto" (the default) chooses from :data:`AUTO_ALPHAS`
        by inner cross-validation (see ``conflict_tolerance``): on imbalanced data F1 rewards
        rules below 50 % precision. "f1" (not in the paper): the cover takes the rule that
        raises the rule set's training F1 the most, while one does and (with negatives the
        majority) true positives stay at least as many as false ones.
    chi2_threshold : float >= 0, default=4.6
        ChiMerge threshold: adjacent intervals whose chi-square is below it are merged.
    max_intervals : int, None or "auto", default="auto"
        Cap on the intervals per numeric feature (merging continues past the threshold).
        "auto" (the default) chooses 3 or None (uncapped: only the threshold stops merging,
        as in the paper) by inner cross-validation, which fits the learners twice; on more
        than :data:`AUTO_SIGNIFICANT_ROWS` rows its uncapped bins keep only significant cut
        points (as ``significant_cuts=True``), and on more than :data:`AUTO_UNCAPPED_ROWS`
        rows it means 3 (uncapped bins stop compressing the records there, and the fit's cost
        grows with the rows).
    top_k : int or None, default=200
        Candidates kept after the local-support filter, ranked by exclusiveness.
    max_rules : int, None or "auto", default="auto"
        Cap on the number of rules ("LIBRE 3" in the paper is ``max_rules=3``; None: no cap,
        the paper's LIBRE). "auto" chooses it from :data:`AUTO_STOPS` by inner
        cross-validation on the training data (see ``conflict_tolerance``).
    min_local_support : float in [0, 1], default=0.05
        Minimum fraction of the positives a candidate rule must cover.
    seeds : {"uncovered", "all"}, default="uncovered"
        "uncovered": only positives not yet covered seed new boundary points (the paper's
        Algorithm 1); "all": every distinct positive seeds one (the authors' code).
    conflict_tolerance : float >= 0 or "auto", default="auto"
        0 is the paper's learner: a boundary point covers no training negative of its
        learner's projection (records identical to its seed aside). With a value > 0 (not in
        the paper) a learner may keep generalizing while the negatives its point covers weigh
        at most ``conflict_tolerance`` times the positives it covers (negatives identical to its
        seed in the learner's columns aside, as at 0): fewer, more general rules
        on large noisy data. Needs ``heuristic="H1"`` and ``seeds="uncovered"``. "auto"
        chooses 0 or 0.5 (0 for other learners) by inner cross-validation: stratified 5-fold
        (3-fold from 20,000 rows) F1 of every combination of the "auto" parameters' values,
        then the fewest rules within max(0.01, one standard error) of the best mean F1
        (:data:`AUTO_CHOICE`, :meth:`choose_auto`). The values used are
        ``conflict_tolerance_``, ``max_rules_``, ``alpha_`` and ``max_intervals_``; the
        paper's learner is ``conflict_tolerance=0, max_rules=None``.
    abstain : bool, default=True
        Drop trailing rules (down to none: predict the negative class) while the rule set is
        less accurate on its training data than answering the majority class everywhere (see
        :func:`~libre_lib.selection.majority_prefix`). False keeps the paper's set cover as is.
    refine : {"f1", "accuracy"} or None, default=None
        Boundary refinement (not in the paper; :mod:`libre_lib.selection.refinement`): after
        the set cover, each numeric condition's endpoints move, one at a time, to the gap
        between two training values that most raises the rule set's training F1 ("f1") or
        accuracy ("accuracy"), until none does. ChiMerge's cut points come from each column alone;
        refined ones from the rows the rule's other conditions select. None keeps the cut
        points. With ``abstain`` a refinement that would leave the rule set less accurate than
        the majority answer is not kept. Not on by default: on the design half "f1" raised the
        mean outer F1 by 0.004, short of the bar (docs/benchmarks.md, sixteenth round).
    significant_cuts : bool, default=False
        After ChiMerge, merge every pair of adjacent intervals of a numeric column whose class
        counts do not differ by Fisher's exact test at ``chi2_threshold``'s level divided by
        the number of places ChiMerge could cut (not in the paper; a Bonferroni correction).
        ChiMerge alone keeps specks of a dozen rows that pass its threshold by chance
        (``amount ∈ [757, 763) ∪ [875, 900)``); with this, rules cut where the data do (a
        column left without a cut point keeps its quartiles, for interactions). On
        the design half the outer F1 was unchanged (mean −0.0005) with plainer rules and
        faster fits, but the bar asked a gain, so it is not the default (docs/benchmarks.md,
        twentieth round); ``max_intervals="auto"`` uses it for its uncapped bins on more than
        :data:`AUTO_SIGNIFICANT_ROWS` rows (a cost rule, the thirty-sixth round).
    merge_order : {"lowest", "sweep"}, default="lowest"
        The order in which ChiMerge merges adjacent intervals of a numeric column below
        ``chi2_threshold``. "lowest" is Kerber's (the pair with the lowest chi-square first);
        "sweep" is the paper's reference code: left-to-right sweeps merge every
        non-overlapping pair below the threshold until one merges nothing, which leaves fewer,
        coarser intervals on noisy columns. Not the default: in its place on the design half
        it cost haberman 0.17-0.19 F1, and as a choice of the search it gained 0.0015 for 1.8×
        adult's search time (docs/benchmarks.md, twenty-seventh round).
    contiguous : bool, default=False
        Every numeric condition is one range: before the filter and the cover, each candidate
        rule's allowed intervals of a numeric column are extended over the gaps between them
        (``tenure ∈ [min, 1) ∪ [2, 6)`` becomes ``tenure < 6``; missing values keep their own
        bin), and the widened rules are recounted. Not in the paper, whose points may allow
        any set of bins. Plainer rules, at a price: not the default, because on the design
        half it cost 0.006 mean F1 (adult −0.039, wdbc −0.035; pima +0.046) and the search
        adult's first fold 0.024, and in the search on the small confirmation datasets
        transfusion 0.22, hepatitis 0.13 and banknote 0.07 (docs/benchmarks.md, twenty-eighth
        and thirtieth rounds).
    positive_class : label or None, default=None
        The class the rules describe. Default: True, or the 1 of 0/1 or -1/1 (numbers or text
        alike), else the yes of a pair of names such as no/yes, n/y, false/true or
        negative/positive, else the minority class. Two labels written as numbers that are
        not 0/1 or -1/1 (1/2, "1"/"2") say nothing of which is positive: ``fit`` takes the
        minority class and warns.
        With more than two classes it is required and the rest form the negative class.
    categorical_features : list of names/indices, bool mask or None, default=None
        Columns to treat as categorical on top of those with non-numeric dtypes.
    random_state : int in [0, 2**32 - 1], RandomState or None, default=None
        Seeds the feature subsets; the same seed and data give identical rules.
    n_jobs : int or None, default=None
        Learners run in this many threads (-1: all cores).
    verbose : int >= 0 or bool, default=0
        0: the progress goes to the ``libre_lib.estimator`` logger only (silent unless logging
        is set up). 1 or more: during ``fit`` that logger also writes it on standard error:
        each inner fold of the "auto" choice as it ends with the time left, the choice, the
        bins and the rules learned.

    Attributes
    ----------
    rules_ : RuleSet
        The selected rules in selection order; ``str(rules_)`` is the paper-style text.
    classes_ : ndarray of shape (2,)
        The two labels, sorted as ``np.unique`` sorts them (scikit-learn's convention).
    positive_class_ : label
        The class the rules describe: ``classes_[1]`` or ``classes_[0]``.
    discretization_ : Discretization
        The bins of every used column (cut points, categories, missing bins).
    feature_subsets_ : list of tuple
        Column indices (into ``discretization_.features``) of each learner.
    n_candidates_ : int
        Size of the union of the learners' boundary points.
    max_rules_, conflict_tolerance_, alpha_, max_intervals_ : int, float or str, or None
        The values used: the parameters, or what "auto" chose.
    significant_cuts_ : bool
        Whether the bins keep only significant cut points: ``significant_cuts``, or the
        uncapped bins of ``max_intervals="auto"`` on more than :data:`AUTO_SIGNIFICANT_ROWS`
        rows.
    auto_scores_ : dict or None
        The inner cross-validation behind an "auto" choice: the combinations tried (dicts of
        the four values) with their mean F1, its standard deviation and mean rules; None
        without "auto".
    auto_fallbacks_ : int
        How many combinations the "auto" refit check passed over: when the fit of the choice
        keeps no rule although the choice kept rules in most inner folds, the next ones in
        the choice's order are fitted until one keeps a rule (:func:`auto_refit_order`).
        Usually 0.
    learner_factor_ : int
        The learners drawn, as a multiple of ``n_estimators``: 1, or a value of
        :data:`LEARNER_FACTORS` when the fit with ``n_estimators`` scored a training F1 more
        than :data:`BELOW_INNER` below the inner score that chose its settings (its random
        column subsets most likely missed a combination the inner folds' learners used) and
        the fit with more learners did not. Usually 1.
    """

    def __init__(
        self,
        n_estimators=50,
        max_features=5,
        subset_sizes="cycle",
        heuristic="H1",
        alpha=AUTO,
        chi2_threshold=4.6,
        max_intervals=AUTO,
        top_k=200,
        max_rules=AUTO,
        min_local_support=0.05,
        seeds="uncovered",
        conflict_tolerance=AUTO,
        abstain=True,
        refine=None,
        significant_cuts=False,
        merge_order="lowest",
        contiguous=False,
        positive_class=None,
        categorical_features=None,
        random_state=None,
        n_jobs=None,
        verbose=0,
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
        self.abstain = abstain
        self.refine = refine
        self.significant_cuts = significant_cuts
        self.merge_order = merge_order
        self.contiguous = contiguous
        self.positive_class = positive_class
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # -- scikit-learn plumbing ----------------------------------------------------------------

    def __setstate__(self, state):
        super().__setstate__(with_missing_params(type(self), state))

    def __sklearn_tags__(self):
        return libre_tags(super().__sklearn_tags__())

    def _check_params(self) -> None:
        validate_params(self.get_params(deep=False), owner=type(self).__name__)

    # -- fitting ------------------------------------------------------------------------------

    def fit(self, X, y, sample_weight=None):
        """Learn the rule set from ``X`` (DataFrame or array; numbers, strings, NaN) and ``y``.

        The stages below are public so a pipeline can run (and cache) them one by one:
        :meth:`choose_auto` → :meth:`discretize` → :meth:`encode` → :meth:`draw_subsets` →
        :func:`learn_subset` per subset (widened by :meth:`ordered_bins`) →
        :func:`union_candidates` → :meth:`select` → :meth:`assemble` →
        :meth:`refine_boundaries` (call :meth:`set_chosen` and set ``auto_scores_`` from the
        choice first; without them it records the parameters, "auto" as
        :data:`AUTO_FALLBACK`). Then, when the rule set's training F1 is more than
        :data:`BELOW_INNER` below the "auto" choice's inner score, the stages from
        :meth:`draw_subsets` on run again with its ``learner_factor`` in
        :data:`LEARNER_FACTORS` (see ``learner_factor_``).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            The training rows: numbers, strings, categories and missing values.
        y : array-like of shape (n_samples,)
            Their labels (two classes, or more with ``positive_class`` set).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, one per row (None: every row weighs 1). A row of weight
            ``w`` counts as ``w`` rows in ChiMerge's class counts, the learners, the set cover
            and the majority guard, so integer weights give the rules that repeating the rows
            gives (with no parameter set to "auto": its inner folds split rows, whatever their
            weight, and score them by weighted F1). Rows of weight 0 count for nothing.

        Returns
        -------
        self : LibreClassifier
            The fitted classifier.
        """
        return self._fit(X, y, sample_weight)

    def _fit(self, X, y, sample_weight=None, learner_factor: int = 1):
        """:meth:`fit`, with ``learner_factor`` times ``n_estimators`` learners (the search's
        refit, when the point's fit falls short of its inner score)."""
        self._check_params()
        with progress_on_stderr(logger, self.verbose):
            X = pandas_frame(X)
            warn_reordered(X, y=y, sample_weight=sample_weight)
            frame = as_frame(X)
            refuse_infinite(frame)
            warn_spelled_alike(frame, self.categorical_features)
            _warn_duplicate_columns(frame)
            target = binary_target(y, self.positive_class, n_rows=frame.shape[0])
            if sample_weight is not None:
                frame, target, _ = weighted_rows(frame, target, sample_weight, type(self).__name__)
            self._warn_id_like_columns(frame)  # before the "auto" choice, which silences it
            chosen, self.auto_scores_ = self.choose_auto(frame, target)
            self._warn_rare_class(target)
            named = isinstance(X, pd.DataFrame) and all(isinstance(c, str) for c in X.columns)
            target_name = _target_name(y, frame.columns)
            self.set_chosen(chosen)
            with warnings.catch_warnings(record=True) as said:  # given once the fit is kept
                warnings.simplefilter("always")
                # bins and learners, shared with the refit check's fits; discretized here, in
                # fit's frame, so that the columns' warnings name the caller of fit
                with warnings.catch_warnings():  # said above, before the choice
                    warnings.filterwarnings("ignore", "Categorical column ", LibreWarning)
                    stages = {("bins", self.max_intervals_): self.discretize(frame, target)}
                binned = list(said)  # the columns' warnings: refits sharing the bins repeat none
                self.learner_factor_ = learner_factor
                self._fit_chosen(frame, target, chosen, stages, target_name, named)
            self.auto_fallbacks_ = 0
            if not len(self.rules_):
                said = _with_said(binned, self._auto_refit_check(frame, target, stages, said))
            self.refine_boundaries(frame, target)
            said = _with_said(binned, self._more_learners_check(frame, target, stages, said))
            _said(self, said)
            self._warn_below_inner(target)
            self._warn_below_trivial(target)
            self._warn_exact_column(frame, target)
            self._warn_marker_categories()
            return self

    def _more_learners_check(self, frame, target: Target, stages: dict, said: list) -> list:
        """The "auto" fit's check against its inner score (the thirty-fifth round): when the
        rule set scores a training F1 more than :data:`BELOW_INNER` below the inner score of
        the combination fitted (:meth:`auto_inner_score`), the same combination is fitted
        with each multiple of ``n_estimators`` in :data:`LEARNER_FACTORS` in turn, and the
        first within :data:`BELOW_INNER` is kept (``learner_factor_``); if none is, the fit
        stays (and :meth:`fit` warns). Returns the warnings to give: the kept fit's."""
        inner = self.auto_inner_score()
        n_positive = target.totals()[0]
        if inner is None or not falls_short(self.rules_, n_positive, inner):
            return said
        chosen = {name: getattr(self, name + "_") for name in AUTO_CHOSEN}
        bins = {key: value for key, value in stages.items() if key[0] == "bins"}
        target_name, feature_names = self.target_name_, hasattr(self, "feature_names_in_")

        def fit_more(factor: int) -> LibreClassifier:
            model = copy.copy(self)  # the same parameters, its own fitted state
            model.learner_factor_ = factor
            model._fit_chosen(frame, target, chosen, dict(bins), target_name, feature_names)
            return model.refine_boundaries(frame, target)

        for factor in growing_factors(self):
            model, model_said = _fit_saying(fit_more, factor)
            if reaches(model.rules_, n_positive, inner):
                logger.info(
                    "the fit scored a training F1 far below its inner score %.3f; refitted "
                    "with %d x n_estimators learners, which is within %.1f of it",
                    inner,
                    factor,
                    BELOW_INNER,
                )
                vars(self).update(vars(model))
                return model_said
        return said

    def _auto_refit_check(self, frame, target: Target, stages: dict, said: list) -> list:
        """The "auto" choice's refit check (the twenty-fourth round, as the search's): when the
        fit of the choice keeps no rule although the choice kept rules in most inner folds,
        fit the next combinations of :func:`auto_refit_order` until one keeps a rule, and keep
        it (``auto_fallbacks_``: how many were passed over). Returns the warnings to give: the
        kept fit's (``said``, the choice's fit's, when none keeps a rule)."""
        order = auto_refit_order(self.auto_scores_)
        params = self.auto_scores_["params"] if len(order) > 1 else []
        target_name, feature_names = self.target_name_, hasattr(self, "feature_names_in_")

        def fit_point(index: int) -> LibreClassifier:
            model = copy.copy(self)  # the same parameters, its own fitted state
            model._fit_chosen(frame, target, params[index], stages, target_name, feature_names)
            return model

        for fallbacks, index in enumerate(order[1:], start=1):
            model, model_said = _fit_saying(fit_point, int(index))
            if len(model.rules_):
                vars(self).update(vars(model))
                self.auto_fallbacks_ = fallbacks
                logger.info(
                    "auto: the choice's fit kept no rule, although it kept rules in most inner "
                    "folds; %s (inner F1 %.3f) ships instead, %d passed over",
                    ", ".join(f"{k}={v}" for k, v in params[index].items()),
                    self.auto_scores_["mean_f1"][index],
                    fallbacks,
                )  # fmt: skip
                return model_said
        return said

    def _fit_chosen(
        self, frame, target: Target, chosen: dict, stages: dict, target_name, feature_names
    ) -> None:
        """:meth:`fit`'s stages from :meth:`set_chosen` to :meth:`assemble` for one choice of
        the "auto" values; ``stages`` holds the learners' candidates by (``max_intervals``,
        ``conflict_tolerance``), shared by the choices of a refit check."""
        started = time.perf_counter()
        self.set_chosen(chosen)
        self.significant_cuts_ = self.thinned(self.max_intervals_, frame.shape[0])
        key = (self.max_intervals_, self.conflict_tolerance_)
        if key not in stages:
            bins = ("bins", self.max_intervals_)
            if bins not in stages:
                with warnings.catch_warnings():  # said before the choice
                    warnings.filterwarnings("ignore", "Categorical column ", LibreWarning)
                    stages[bins] = self.discretize(frame, target)
            discretization = stages[bins]
            records = self.encode(frame, target, discretization)
            logger.info(
                "discretized %d columns into %d bins (%d dropped); %d distinct records",
                len(discretization.features),
                int(discretization.n_bins.sum()),
                len(discretization.dropped),
                records.n_rows,
            )
            subsets = self.draw_subsets(discretization, self.learner_factor_)
            n_bins = discretization.n_bins
            _warn_untolerant(self.conflict_tolerance_, n_bins, subsets)
            candidates = fit_ensemble(
                records, n_bins, subsets, self.heuristic, self.seeds, self.n_jobs,
                self.conflict_tolerance_, self.ordered_bins(discretization),
            )  # fmt: skip
            stages[key] = discretization, records, subsets, candidates
        discretization, records, subsets, candidates = stages[key]
        selection = self.select(candidates, records, discretization)
        self.assemble(
            frame.columns, target, discretization, subsets, candidates, selection,
            target_name=target_name, feature_names=feature_names,
        )  # fmt: skip
        drawn = int(self.n_estimators) * self.learner_factor_
        repeated = f" ({drawn - len(subsets)} of the {drawn} drawn repeated a feature subset)"
        logger.info(
            "%d learners%s gave %d candidate rules; %d passed the filter, %d selected (%.2f s)",
            len(subsets), repeated if len(subsets) < drawn else "", len(candidates),
            selection.n_filtered, selection.indices.size, time.perf_counter() - started,
        )  # fmt: skip

    # -- the stages of fit --------------------------------------------------------------------

    def _warn_id_like_columns(self, frame: pd.DataFrame) -> None:
        """Warn about id-like categorical columns at once: the "auto" choice's inner folds
        (which silence the library's warnings) run first."""
        flags = resolve_categorical(frame, self.categorical_features, warn=False)
        names = [
            name for name, categorical in zip(frame.columns, flags, strict=True) if categorical
        ]

        def as_text(name: str) -> bool:  # numbers or dates as text: warned of in discretize
            return bool(misread_text_columns(frame, self.categorical_features, columns=[name]))

        for message in identifier_messages(frame[names], [True] * len(names), skip=as_text):
            warnings.warn(message, LibreWarning, stacklevel=user_stacklevel())

    def count_classes(self, frame: pd.DataFrame, target: Target) -> list[ColumnCounts]:
        """The class counts of every column, which :meth:`discretize` merges: the same for
        every ``chi2_threshold`` and ``max_intervals`` (a search computes them once per fold).
        Warns of nothing: :meth:`discretize` does, when it counts."""
        categorical = resolve_categorical(frame, self.categorical_features, warn=False)
        return frame_counts(frame, target.positive, categorical, target.weight)

    def discretize(
        self,
        frame: pd.DataFrame,
        target: Target,
        max_intervals=AUTO,
        counts: list[ColumnCounts] | None = None,
        n_rows: int | None = None,
    ) -> Discretization:
        """ChiMerge / category bins of every column (constant columns dropped with a warning);
        ``max_intervals`` default: the one the fit uses; ``counts``: :meth:`count_classes` of
        the same rows, if already computed; ``n_rows``: the rows of the fit the bins are for,
        when ``frame`` is an inner fold of them (they decide :meth:`thinned`)."""
        self._check_params()
        if counts is None:  # resolve_categorical's warnings reach the caller of fit
            categorical = resolve_categorical(frame, self.categorical_features)
            counts = frame_counts(frame, target.positive, categorical, target.weight)
        used = self._used("max_intervals") if max_intervals == AUTO else max_intervals
        discretization = discretization_from_counts(
            counts,
            chi2_threshold=float(self.chi2_threshold),
            max_intervals=used,
            significant_cuts=self.thinned(used, frame.shape[0] if n_rows is None else n_rows),
            merge_order=self.merge_order,
        )
        if not discretization.features:
            raise DataError("No usable feature: every column of X is constant or entirely missing.")
        return discretization

    def thinned(self, max_intervals, n_rows: int) -> bool:
        """Whether bins capped at ``max_intervals`` for a fit on ``n_rows`` rows keep only
        significant cut points: ``significant_cuts``, or the uncapped bins of
        ``max_intervals="auto"`` on more than :data:`AUTO_SIGNIFICANT_ROWS` rows (a cost
        rule, the thirty-sixth round of docs/benchmarks.md).

        Parameters
        ----------
        max_intervals : int or None
            The cap the bins are made with.
        n_rows : int
            The rows of the fit the bins are for.

        Returns
        -------
        bool
        """
        if self.significant_cuts:
            return True
        return (
            self.max_intervals == AUTO and max_intervals is None and n_rows > AUTO_SIGNIFICANT_ROWS
        )

    @staticmethod
    def encode(
        frame: pd.DataFrame, target: Target, discretization: Discretization
    ) -> DistinctRecords:
        """Bin codes of the training rows, collapsed to distinct records with class weights
        (the rows' sample weights, if ``target`` has them)."""
        codes = discretization.transform(frame)
        return distinct_records(codes, discretization.n_bins, *target.class_weights())

    def draw_subsets(
        self, discretization: Discretization, learner_factor: int = 1
    ) -> list[tuple[int, ...]]:
        """The learners' feature subsets, fixed up front from ``random_state``:
        ``learner_factor`` times ``n_estimators`` of them (see ``learner_factor_``), the
        first ``n_estimators`` the same whatever the factor."""
        pool = [j for j, b in enumerate(discretization.n_bins) if b >= 2]
        if not pool:
            return []
        rng = check_random_state(self.random_state)
        return draw_feature_subsets(
            pool,
            self.n_estimators * learner_factor,
            self._n_features(len(pool)),
            rng,
            self.subset_sizes,
        )

    def ordered_bins(self, discretization: Discretization) -> np.ndarray | None:
        """What :func:`learn_subset` widens to one range per numeric condition: the
        discretization's ordered bins with ``contiguous``, else None."""
        return discretization.ordered_bins() if self.contiguous else None

    def select(
        self,
        candidates: Candidates,
        records: DistinctRecords,
        discretization: Discretization,
        max_rules=AUTO,
    ) -> Selection:
        """Local-support filter, top-K and weighted set cover (section 3.3), capped at
        ``max_rules`` (default: the one the fit uses)."""
        return select_rules(
            candidates,
            records,
            discretization.n_bins,
            alpha=_gain(self._used("alpha")),
            top_k=self.top_k,
            max_rules=self._used("max_rules") if max_rules == AUTO else max_rules,
            min_local_support=float(self.min_local_support),
        )

    # -- the "auto" choice --------------------------------------------------------------------

    def _auto_options(self, n_rows: int) -> dict[str, list]:
        """The values inner cross-validation chooses from, per parameter (one value: fixed),
        for a fit on ``n_rows`` rows."""
        tolerant = self.heuristic == "H1" and self.seeds == "uncovered"
        capped = n_rows > AUTO_UNCAPPED_ROWS
        auto = {
            "max_intervals": [AUTO_FALLBACK["max_intervals"]] if capped else list(AUTO_INTERVALS),
            "conflict_tolerance": list(AUTO_TOLERANCES) if tolerant else [0.0],
            "alpha": list(AUTO_ALPHAS),
            "max_rules": list(AUTO_STOPS),
        }
        return {
            name: values if getattr(self, name) == AUTO else [getattr(self, name)]
            for name, values in auto.items()
        }

    def _thinned_by_rows(self) -> bool:
        """Whether the fit's bins keep only significant cut points because of its rows (the
        uncapped bins of "auto" on more than :data:`AUTO_SIGNIFICANT_ROWS` rows), not because
        ``significant_cuts`` asks it."""
        return bool(getattr(self, "significant_cuts_", False)) and not self.significant_cuts

    def _used(self, name: str):
        """The value a fit uses: the parameter, or what "auto" chose (:data:`AUTO_FALLBACK`
        before a choice)."""
        value = getattr(self, name)
        if value != AUTO:
            return value
        return getattr(self, name + "_") if hasattr(self, name + "_") else AUTO_FALLBACK[name]

    def choose_auto(
        self, frame: pd.DataFrame, target: Target, n_rows: int | None = None
    ) -> tuple[dict, dict | None]:
        """The values of the "auto" parameters a fit on these rows uses, chosen by inner
        cross-validation (section 4's protocol on the training rows only).

        Every combination of :data:`AUTO_INTERVALS` (``max_intervals``),
        :data:`AUTO_TOLERANCES` (``conflict_tolerance``), :data:`AUTO_ALPHAS` (``alpha``) and
        :data:`AUTO_STOPS` (``max_rules``) among the parameters set to "auto" is scored by
        stratified 5-fold (3-fold from :data:`AUTO_LARGE` rows) F1; the choice is the fewest
        rules within max(0.01, one standard error) of the best mean F1 (:data:`AUTO_CHOICE`).
        Learners are fitted once per
        (``max_intervals``, ``conflict_tolerance``); every ``alpha`` is a cover of the same
        candidates and every ``max_rules`` a prefix of one cover. Uncapped bins are tried only
        for a fit on at most :data:`AUTO_UNCAPPED_ROWS` rows.

        Parameters
        ----------
        frame : DataFrame
            The training rows (as :func:`~libre_lib.inputs.as_frame` returns them).
        target : Target
            Their binary target.
        n_rows : int or None, default=None
            The rows of the fit the choice is for, when ``frame`` is a sample of them (default:
            ``frame``'s).

        Returns
        -------
        chosen : dict
            ``max_intervals``, ``conflict_tolerance``, ``alpha`` and ``max_rules``: the
            parameter's value, or the one chosen (None for ``max_rules``: no cap).
        scores : dict or None
            The inner cross-validation, as ``auto_scores_``: ``params`` (one dict of the
            four values per combination), ``mean_f1``, ``std_f1``, ``mean_rules``,
            ``ruled_folds`` (how many inner folds kept at least one rule; one value per
            combination) and ``n_splits``. None when nothing is "auto" or a class has too
            few rows to validate (then "auto" means :data:`AUTO_FALLBACK`).
        """
        self._check_params()
        options = self._auto_options(frame.shape[0] if n_rows is None else n_rows)
        combos = [dict(zip(options, values, strict=True)) for values in product(*options.values())]
        fallback = {name: (AUTO_FALLBACK[name] if getattr(self, name) == AUTO else values[0])
                    for name, values in options.items()}  # fmt: skip
        if len(combos) == 1:
            return combos[0], None
        fit_rows = frame.shape[0] if n_rows is None else n_rows
        n_rows = frame.shape[0]
        n_splits = AUTO_FOLDS_LARGE if n_rows >= AUTO_LARGE else AUTO_FOLDS
        n_positive = int(target.positive.sum())
        if min(n_positive, n_rows - n_positive) < 2 * n_splits:
            return fallback, None  # too few rows of a class to validate
        folds = StratifiedKFold(n_splits, shuffle=True, random_state=_seed(self.random_state))
        scores = np.zeros((len(combos), n_splits))
        sizes = np.zeros_like(scores)
        started, done = time.perf_counter(), 0
        still = Heartbeat(
            logger,
            lambda seconds: (
                f"auto: still working: {done}/{n_splits} inner folds done, none in the "
                f"last {seconds:.0f} s"
            ),
        )
        with still:
            for f, (train, test) in enumerate(folds.split(np.zeros(n_rows), target.positive)):
                held_out = target.take(test)
                with warnings.catch_warnings():  # the fit on all rows says it once
                    warnings.simplefilter("ignore", LibreWarning)
                    scores[:, f], sizes[:, f] = self._validate_fold(
                        frame.iloc[train],
                        target.take(train),
                        frame.iloc[test],
                        held_out,
                        options,
                        fit_rows,
                    )
                done, elapsed = f + 1, time.perf_counter() - started
                still.said()
                logger.info(
                    "auto: inner fold %d/%d done (%d combinations); %.0f s elapsed, about %.0f s "
                    "left", f + 1, n_splits, len(combos), elapsed,
                    elapsed / (f + 1) * (n_splits - f - 1),
                )  # fmt: skip
        mean, std, rules = scores.mean(axis=1), scores.std(axis=1), sizes.mean(axis=1)
        choice = choose_candidate(mean, rules, resolve_tolerance(*AUTO_CHOICE, mean, std, n_splits))
        chosen = {
            **combos[choice],
            "conflict_tolerance": float(combos[choice]["conflict_tolerance"]),
        }
        table = {"params": combos, "mean_f1": mean.tolist(), "std_f1": std.tolist(),
                 "mean_rules": rules.tolist(), "ruled_folds": (sizes >= 1).sum(axis=1).tolist(),
                 "n_splits": n_splits}  # fmt: skip
        logger.info(
            "auto: %s (inner F1 %.3f with %.1f rules)%s",
            ", ".join(f"{k}={v}" for k, v in chosen.items()), mean[choice], rules[choice],
            self._row_rules(chosen["max_intervals"], fit_rows),
        )  # fmt: skip
        return chosen, table

    def _row_rules(self, max_intervals, n_rows: int) -> str:
        """What the rows decided in an "auto" choice of ``max_intervals``, for its log line."""
        if self.max_intervals != AUTO:
            return ""
        if n_rows > AUTO_UNCAPPED_ROWS:
            return f"; max_intervals=3 by the rows (more than {AUTO_UNCAPPED_ROWS:,})"
        if self.thinned(max_intervals, n_rows) and not self.significant_cuts:
            rows = f"{AUTO_SIGNIFICANT_ROWS:,}"
            return f"; uncapped bins with significant cuts only (more than {rows} rows)"
        return ""

    def _validate_fold(
        self, X_train, target, X_test, held_out: Target, options, fit_rows: int
    ) -> tuple:
        """(F1, rules) on the held-out rows of every combination of ``options`` (in
        :func:`itertools.product` order), as ``fit`` would give with those values (on
        ``fit_rows`` rows: :meth:`thinned`); F1 weighted by the held-out rows' sample
        weights, if any."""
        n_positive, n_negative = target.totals()
        truth = held_out.positive
        f1, n_rules = [], []
        # every bin cap merges the same class counts: counted once per fold
        counts = self.count_classes(X_train, target) if len(options["max_intervals"]) > 1 else None
        for max_intervals in options["max_intervals"]:
            discretization = self.discretize(X_train, target, max_intervals, counts, fit_rows)
            records = self.encode(X_train, target, discretization)
            subsets = self.draw_subsets(discretization)
            atoms: dict = {}
            for tolerance in options["conflict_tolerance"]:
                candidates = fit_ensemble(
                    records, discretization.n_bins, subsets, self.heuristic, self.seeds,
                    self.n_jobs, tolerance, self.ordered_bins(discretization),
                )  # fmt: skip
                filtered = filter_for_cover(
                    candidates, records, discretization.n_bins, self.top_k,
                    float(self.min_local_support),
                )  # fmt: skip
                for alpha in options["alpha"]:
                    selection = cover_filtered(
                        filtered, records, discretization.n_bins, _gain(alpha), None
                    )
                    points = candidates.points[selection.indices]
                    fired = [
                        r.evaluate(X_test, atoms) for r in rules_from_points(points, discretization)
                    ]
                    for stop in options["max_rules"]:
                        k = len(fired) if stop is None else min(stop, len(fired))
                        if self.abstain:
                            k = majority_prefix(selection.stats[:k], n_positive, n_negative)
                        pred = np.logical_or.reduce(fired[:k]) if k else np.zeros(truth.size, bool)
                        f1.append(f1_score(truth, pred, held_out.weight))
                        n_rules.append(k)
        return np.array(f1), np.array(n_rules, dtype=float)

    def set_chosen(self, chosen: dict) -> LibreClassifier:
        """Record the values the fit uses (``chosen`` as :meth:`choose_auto` returns it) as
        ``max_intervals_``, ``conflict_tolerance_``, ``alpha_`` and ``max_rules_``."""
        self.max_intervals_ = chosen["max_intervals"]
        self.conflict_tolerance_ = float(chosen["conflict_tolerance"])
        self.alpha_ = _gain(chosen["alpha"])
        self.max_rules_ = chosen["max_rules"]
        return self

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
        self.classes_ = sorted_labels(target.classes)
        self.positive_class_ = target.positive_class
        self.target_name_ = target_name
        self.discretization_ = discretization
        self.feature_subsets_ = [tuple(int(f) for f in s) for s in subsets]
        self.n_candidates_ = len(candidates)
        if not hasattr(self, "auto_scores_"):  # assembled from stages without a choice
            self.auto_scores_ = None
            self.set_chosen({name: self._used(name) for name in AUTO_CHOSEN})
        if not hasattr(self, "auto_fallbacks_"):
            self.auto_fallbacks_ = 0
        if not hasattr(self, "learner_factor_"):
            self.learner_factor_ = 1
        chosen = selection.indices.size
        if self.abstain:
            selection = self._no_worse_than_majority(selection, target)
        positive_label, negative_label = self._shown_classes()
        self.rules_ = RuleSet(
            tuple(rules_from_points(candidates.points[selection.indices], discretization)),
            target=target_name,
            positive_class=positive_label,
            negative_class=negative_label,
            stats=selection.stats,
        )
        if not chosen:
            guard = (
                ' With abstain=True (the default), the "auto" choice scores rule sets as the '
                "majority guard cuts them back; abstain=False keeps rules less accurate than "
                "answering the majority class, which a rare class may need for its recall."
                if self.abstain and _best_auto_f1(self) == 0
                else ""
            )
            warnings.warn(
                "No rule was learned: no candidate passed the local-support filter with a "
                "positive set-cover gain, so the model predicts the negative class everywhere. "
                "The columns may hold little signal for this target; if they should hold "
                "some, try a higher alpha, a lower min_local_support or chi2_threshold, or "
                "more estimators." + guard,
                LibreWarning,
                stacklevel=user_stacklevel(),
            )
        self._warn_weak_rules(target)
        return self

    def _warn_marker_categories(self) -> None:
        """Warn when a rule tests a category that often writes a missing value ("?", "",
        "n/a"): as a category it matches only that spelling, where a missing value would take
        the rules' ``∪ missing`` parts and missing cells of other spellings."""
        found = {
            (c.feature, value)
            for rule in self.rules_
            for c in rule
            for value in c.categories
            if is_usual_marker(value)
        }
        if not found:
            return
        listed = ", ".join(f"{value!r} in column {feature!r}" for feature, value in sorted(found))
        warnings.warn(
            f"The rules test {listed} as a category: a text that often writes a missing "
            "value. If it does here, read it as missing (pd.read_csv(..., na_values=[...]) or "
            "X.replace(..., np.nan)) and fit again; if it is a real category, ignore this.",
            LibreWarning,
            stacklevel=user_stacklevel(),
        )

    def _warn_rare_class(self, target: Target) -> None:
        """Warn when the positive class, the one the rules describe, has fewer than
        :data:`RARE_CLASS_ROWS` training rows: rules learned from so few rows describe them
        rather than a pattern (and the "auto" parameters, which need two positive rows per
        inner fold, take :data:`AUTO_FALLBACK` unvalidated)."""
        count = int(np.count_nonzero(target.positive))
        if count >= RARE_CLASS_ROWS:
            return
        label = (
            self.positive_class
            if one_vs_rest(target.positive_class, self.positive_class)
            else target.positive_class
        )
        auto = [name for name in AUTO_CHOSEN if getattr(self, name) == AUTO]
        unvalidated = (
            f' The "auto" parameters ({", ".join(auto)}) took their fallback values '
            "unvalidated: too few rows of the class for inner folds."
            if auto and count < 2 * AUTO_FOLDS
            else ""
        )
        warnings.warn(
            f"Only {counted(count, 'training row')} of {target.positive.shape[0]:,} "
            f"{'is' if count == 1 else 'are'} of the positive class ({label!r}): rules learned "
            "from so few rows describe those rows rather than a pattern, and seldom hold on new "
            f"rows.{unvalidated}",
            LibreWarning,
            stacklevel=user_stacklevel(),
        )

    def _warn_exact_column(self, frame: pd.DataFrame, target: Target) -> None:
        """Warn of a column that alone (nearly) tells the classes apart
        (:func:`telling_rule`)."""
        rows = int(np.count_nonzero(target.positive)), int(np.count_nonzero(~target.positive))
        found = telling_rule(self.rules_, frame, target.totals()[0], rows)
        if found is not None:
            column = self.rules_.rules[found[0]].conditions[0].feature
            warnings.warn(
                exact_column_message(self.rules_, f"X.drop(columns={column!r})", found),
                LibreWarning,
                stacklevel=user_stacklevel(),
            )

    def refine_boundaries(self, frame: pd.DataFrame, target: Target) -> LibreClassifier:
        """Move the fitted rules' numeric endpoints as ``refine`` asks (the last stage of
        :meth:`fit`; nothing with ``refine=None``). ``frame`` and ``target`` are the training
        rows :meth:`fit` learned from. Returns ``self``."""
        if self.refine is None or not len(self.rules_):
            return self
        rules = self.rules_.rules
        refined = tuple(refine_rules(rules, frame, target, OBJECTIVES[self.refine]))
        stats = rule_stats(refined, frame, target)
        if self.abstain and majority_prefix(stats, *target.totals()) < len(refined):
            logger.info("refinement not kept: the rule set would be below the majority answer")
            return self
        moved = sum(a != b for a, b in zip(rules, refined, strict=True))
        self.rules_ = replace(self.rules_, rules=refined, stats=stats)
        logger.info("refinement moved cut points of %d of %d rules", moved, len(rules))
        return self

    @staticmethod
    def _no_worse_than_majority(selection: Selection, target: Target) -> Selection:
        n_positive, n_negative = target.totals()
        k = majority_prefix(selection.stats, n_positive, n_negative)
        if k == selection.indices.size:
            return selection
        warnings.warn(
            f"Kept {k} of the {counted(selection.indices.size, 'rule')} the set cover chose: "
            "with more, the "
            "rule set was less accurate on its training data than answering the majority class "
            "everywhere (abstain=False keeps them all).",
            LibreWarning,
            stacklevel=user_stacklevel(),
        )
        return Selection(
            selection.indices[:k], selection.stats[:k], selection.n_candidates,
            selection.n_filtered,
        )  # fmt: skip

    def _warn_below_inner(self, target: Target) -> None:
        """Warn when the rule set scores a training F1 more than :data:`BELOW_INNER` below the
        mean validation F1 its "auto" choice scored on the inner folds. The learners' columns
        are drawn at random: with 20 columns and 50 learners, a given pair of columns is in
        no learner's subset about a third of the time, and a concept joining them is lost in
        this fit while the inner folds' learners found it."""
        inner = self.auto_inner_score()
        rows = int(np.count_nonzero(target.positive))
        message = (
            None if inner is None else below_inner_message(self, target.totals()[0], inner, rows)
        )
        if message:
            warnings.warn(message, LibreWarning, stacklevel=user_stacklevel())

    def _warn_below_trivial(self, target: Target) -> None:
        """Warn when no "auto" combination's mean inner F1 reaches flagging every row's
        (``LibreSearchCV``'s warning, for the estimator's own inner choice)."""
        message = auto_below_trivial_message(self, *target.totals())
        if message:
            warnings.warn(message, LibreWarning, stacklevel=user_stacklevel())

    def auto_inner_score(self) -> float | None:
        """The mean validation F1 that the "auto" combination this model was fitted with
        scored on the inner folds (the choice, or the refit check's fallback).

        Returns
        -------
        float or None
            None when nothing was "auto", the rows were too few for folds, or the model is
            not fitted.
        """
        order = auto_refit_order(getattr(self, "auto_scores_", None))
        if not len(order):
            return None
        index = int(order[min(getattr(self, "auto_fallbacks_", 0), len(order) - 1)])
        return float(self.auto_scores_["mean_f1"][index])

    def _warn_weak_rules(self, target: Target) -> None:
        n_positive, n_negative = target.totals()
        total = n_positive + n_negative
        base = n_positive / total if total else 0.0
        bar = min(WEAK_LIFT * base, (1 + base) / 2)
        weak = [
            (i, s.precision) for i, s in enumerate(self.rules_.stats, start=1) if s.precision < bar
        ]
        if weak and base < 1:
            listed = ", ".join(f"rule {i} ({p:.2f})" for i, p in weak)
            how = (
                f"{WEAK_LIFT:g} x the base rate {base:.2f}"
                if bar == WEAK_LIFT * base
                else f"halfway from the base rate {base:.2f} to 1"
            )
            alpha = self._used("alpha")
            bar_now = (
                f": {1 - float(alpha):.2f} here"
                if isinstance(alpha, numbers.Real) and not isinstance(alpha, bool)
                else ""
            )
            remedies = [
                "a lower alpha (the cover takes a rule whose precision on the rows it adds is "
                f"above 1 - alpha{bar_now})",
            ]
            first = weak[0][0]
            if first > 1:  # a cap keeps rule 1 whatever it is: no remedy for it
                remedies.append(f"max_rules={first - 1} (the rules before rule {first})")
                if self.max_rules != AUTO:
                    remedies.append("max_rules='auto'")
            warnings.warn(
                f"{listed}: training precision below {bar:.2f} ({how}) "
                "of the positive class; such rules add little over guessing. Consider "
                + (", ".join(remedies[:-1]) + f" or {remedies[-1]}" if len(remedies) > 1
                   else remedies[0])
                + ".",
                LibreWarning,
                stacklevel=user_stacklevel(),
            )

    def _n_features(self, n_usable: int) -> int:
        if self.max_features is None:
            return n_usable
        if isinstance(self.max_features, numbers.Integral):
            return min(int(self.max_features), n_usable)
        return max(1, round(self.max_features * n_usable))

    # -- prediction ---------------------------------------------------------------------------

    def _frame_for_predict(self, X) -> pd.DataFrame:
        check_is_fitted(self, "rules_")
        X = pandas_frame(X)
        if isinstance(X, pd.DataFrame) and not hasattr(self, "feature_names_in_"):
            if X.shape[1] != self.n_features_in_:
                raise SchemaError(
                    f"X has {X.shape[1]} features, but LibreClassifier is expecting "
                    f"{self.n_features_in_} features as input."
                )
            names = [str(c) for c in X.columns]
            named = all(isinstance(c, str) for c in X.columns)
            fitted_on_array = self.columns_ == [f"x{i}" for i in range(len(self.columns_))]
            if (
                not fitted_on_array
                and sorted(names) == sorted(self.columns_)
                and len(set(names)) == len(names)
            ):
                # columns named by numbers or tuples (no feature_names_in_, as in scikit-learn):
                # the rules name them, so they are matched by name, not position; the same
                # names as texts too (a Parquet round trip writes 7 as "7"), which were
                # matched by position: in another order, predictions changed without an error
                return as_frame(X.set_axis(names, axis=1), allow_empty=True)[self.columns_]
            if named:
                warnings.warn(
                    "X has feature names, but LibreClassifier was fitted without feature "
                    "names; columns are matched by position.",
                    UserWarning,
                    stacklevel=user_stacklevel(),
                )
            elif names != [str(i) for i in range(len(names))]:  # not a frame of an array
                warnings.warn(
                    f"X's columns {excerpt(names)} are not the columns seen in fit "
                    f"({excerpt(self.columns_)}); they are matched by position.",
                    UserWarning,
                    stacklevel=user_stacklevel(),
                )
            return as_frame(X.set_axis(self.columns_, axis=1), allow_empty=True)
        if isinstance(X, pd.DataFrame):
            frame = as_frame(X, allow_empty=True)
            expected = self.columns_
            if list(frame.columns) != expected:
                missing = [c for c in expected if c not in frame.columns]
                extra = [c for c in frame.columns if c not in expected]
                if missing or extra:
                    parts = [f"missing {excerpt(missing)}"] if missing else []
                    parts += [f"unexpected {excerpt(extra)}"] if extra else []
                    raise SchemaError(
                        f"X's columns differ from the columns seen in fit: {', '.join(parts)}. "
                        "Pass the same columns (any order) as in fit"
                        + (f", e.g. X.drop(columns={extra!r})." if extra and not missing else ".")
                    )
                frame = frame[expected]
            return frame
        frame = as_frame(X, feature_names=None, allow_empty=True)
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
                stacklevel=user_stacklevel(),
            )
        return frame.set_axis(self.columns_, axis=1)

    def fired_rules(self, X) -> np.ndarray:
        """Which rule fires on which row.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            The columns seen in fit (see :meth:`predict`).

        Returns
        -------
        ndarray of bool, shape (n_samples, n_rules)
            Column ``i`` is ``rules_[i]`` (the reports' "Rule ``i + 1``").
        """
        frame = self._frame_for_predict(X)
        self._warn_unmatched_columns(frame)
        return self.rules_.fired(frame)

    def _warn_unmatched_columns(self, frame: pd.DataFrame) -> None:
        """Warn about a column the rules test in which no row of ``frame`` (at least
        :data:`UNMATCHED_MIN_ROWS`) has a value seen in fit: categories none of which were seen
        (codes instead of text, another spelling), or missing everywhere where fit saw none.
        Such a column matches no rule's condition on it, silently; the text does not name the
        counts, so a warnings filter shows it once for batches of the same data."""
        if frame.shape[0] < UNMATCHED_MIN_ROWS:
            return
        tested = tested_columns(self.rules_)
        for feature in self.discretization_.features:
            if feature.name not in tested:
                continue
            series = frame[feature.name]
            # the first rows settle it for any column fed as in training, at no cost
            try:
                settled = bool((feature.codes(series.iloc[:UNMATCHED_MIN_ROWS]) >= 0).any())
            except DataError:  # a bad value: the whole column's error counts them all
                settled = False
            if settled or (feature.codes(series) >= 0).any():
                continue
            if series.notna().any():
                seen = ", ".join(map(str, feature.categories[:UNMATCHED_EXAMPLES]))
                more = ", ..." if len(feature.categories) > UNMATCHED_EXAMPLES else ""
                message = (
                    f"Column {feature.name!r} holds no value seen in fit (its categories: "
                    f"{seen}{more}), so no rule that tests it matches. Check that it is encoded "
                    "as in training (text, not codes; the same spelling)."
                )
            else:
                message = (
                    f"Column {feature.name!r} is missing in every row, but had values in fit, "
                    "so no rule that tests it matches. Check that it is read as in training."
                )
            warnings.warn(message, LibreWarning, stacklevel=user_stacklevel())

    def _shown_classes(self) -> tuple:
        """The (positive, negative) labels the rules' text shows: the model's classes, or for
        one class against the rest (classes False and True) that class and "not" it."""
        index = self._positive_index()
        positive, negative = self.classes_[index], self.classes_[1 - index]
        if one_vs_rest(self.positive_class_, self.positive_class):
            return self.positive_class, f"not {self.positive_class}"
        return positive, negative

    def _positive_index(self) -> int:
        """Where the positive class is in ``classes_`` (0 or 1)."""
        return 0 if self.classes_[0] == self.positive_class_ else 1

    def _labels(self, positive: np.ndarray) -> np.ndarray:
        """The positive label where ``positive`` is set, the negative label elsewhere."""
        index = self._positive_index()
        return self.classes_[np.where(positive, index, 1 - index)]

    def _positive_score(self, fired: np.ndarray) -> np.ndarray:
        """The training precision of the most precise rule that fires, 0 where none fires."""
        if not fired.shape[1]:
            return np.zeros(fired.shape[0])
        precision = np.array([s.precision for s in self.rules_.stats], dtype=float)
        return np.where(fired, precision, 0.0).max(axis=1)

    def decision_function(self, X) -> np.ndarray:
        """Score of each row, oriented as scikit-learn's binary classifiers: positive values
        mean ``classes_[1]``.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            Where a rule fires, the training precision of the most precise one (in (0, 1]);
            where none fires, -1. Negated when the positive class is ``classes_[0]``. So the
            sign always agrees with ``predict`` (> 0 means ``classes_[1]``, < 0
            ``classes_[0]``, never 0, whatever a threshold tool does at 0), and rows rank as
            :meth:`predict_proba` ranks them.
        """
        fired = self.fired_rules(X)
        score = np.where(
            fired.any(axis=1), np.maximum(self._positive_score(fired), _SMALLEST_SCORE), -1.0
        )
        return score if self._positive_index() == 1 else -score

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, columns in the order of ``classes_``.

        The positive class's probability is the training precision of the most precise rule
        that fires on the row (the share of training rows that rule covers which are positive),
        0 where no rule fires; the negative class gets the rest. It ranks rows as
        :meth:`decision_function` does. A row covered only by a rule less than half precise
        gets a positive probability below 0.5 although ``predict`` answers positive: the rules
        decide, the probability measures how reliable the deciding rule was. It is not
        calibrated (0 where no rule fires), and 0.5 on it is not :meth:`predict`'s answer.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Rows sum to 1.
        """
        score = self._positive_score(self.fired_rules(X))
        proba = np.column_stack([1.0 - score, score])
        return proba if self._positive_index() == 1 else proba[:, ::-1].copy()

    def predict_log_proba(self, X) -> np.ndarray:
        """The logarithm of :meth:`predict_proba`: ``-inf`` where a probability is 0 (the
        positive class where no rule fires, the negative where a rule of precision 1 does), as
        scikit-learn's trees give it.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_``.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X) -> np.ndarray:
        """The positive label where some rule fires, the negative label elsewhere.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            The columns seen in fit. A DataFrame's columns are matched by name, in any order
            (names that are numbers or tuples too, as the rules show them). Other names raise
            a :class:`~libre_lib.errors.SchemaError`, or, for a model fitted on an array or on
            columns named by numbers, are matched by position with a warning. An array's
            columns are matched by position. A batch without rows gives an empty result.

        Returns
        -------
        ndarray of shape (n_samples,)
            One label of ``classes_`` per row.
        """
        return self._labels(self.fired_rules(X).any(axis=1))

    def score(self, X, y, sample_weight=None) -> float:
        """Mean accuracy of :meth:`predict` on ``X`` against ``y``.

        Parameters
        ----------
        X : DataFrame or array of shape (n_samples, n_features)
            The rows to predict.
        y : array-like of shape (n_samples,)
            Their labels; for one class against the rest (more than two classes in training)
            the labels of every class, compared as ``y == positive_class`` (or the model's
            own classes, True and False).
        sample_weight : array-like of shape (n_samples,), default=None
            Row weights.

        Returns
        -------
        float
        """
        check_is_fitted(self, "rules_")
        if one_vs_rest(self.positive_class_, self.positive_class):
            y = one_vs_rest_labels(y, self.positive_class)
        return super().score(X, y, sample_weight=sample_weight)

    def explain(self, X) -> pd.DataFrame:
        """Per row: the prediction, the rules that fired and their text.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Rows with the training columns.

        Returns
        -------
        DataFrame
            Indexed as ``X``: ``prediction``; ``rules``, the 0-based positions in ``rules_`` of
            the rules that fire (the rule reports number rules from 1: position ``i`` is
            "Rule ``i + 1``" there; rows where the same rules fire share one list, so copy a
            row's list before changing it); ``explanation``, their texts joined by " OR ", a
            rule of several conditions in parentheses when several fire (empty when none
            fires).
        """
        fired = self.fired_rules(X)
        texts = [str(r) for r in self.rules_]
        inverse, patterns = fired_patterns(fired)  # once per distinct pattern, not per row
        positions = np.empty(len(patterns), dtype=object)  # rows of a pattern share its list
        positions[:] = [list(p) for p in patterns]
        explained = np.empty(len(patterns), dtype=object)
        explained[:] = [fired_text([texts[i] for i in p]) for p in patterns]
        X = pandas_frame(X)
        index = X.index if isinstance(X, pd.DataFrame) else None
        return pd.DataFrame(
            {
                "prediction": self._labels(fired.any(axis=1)),
                "rules": positions[inverse],
                "explanation": explained[inverse],
            },
            index=index,
        )

    # -- persistence --------------------------------------------------------------------------

    def to_sql(self, missing_values=None) -> str:
        """The rule set as one boolean SQL expression over the training columns.

        SQL NULL is the missing value: a table must hold missing values as NULL, not as a
        float NaN (which PostgreSQL and DuckDB compare as larger than every number), and its
        columns in the types of the training columns (numbers as numbers, not as text).

        Parameters
        ----------
        missing_values : dict, optional
            Per column, the values that stand for a missing value in the table (e.g.
            ``{"bmi": [0]}``, as ``pd.read_csv``'s ``na_values`` read the training file): they
            are read as NULL. A pipeline's model gets its spec's with ``libre models sql``.

        Returns
        -------
        str
            TRUE where the model predicts the positive class (missing values follow the rules'
            ``∪ missing`` parts); see :func:`libre_lib.render.ruleset_sql`.
        """
        check_is_fitted(self, "rules_")
        return ruleset_sql(self.rules_, self._sql_markers(missing_values))

    def _sql_markers(self, missing_values) -> dict:
        if missing_values is None:
            return {}
        if not isinstance(missing_values, Mapping):
            raise ParameterError(
                "missing_values must map column names to the values that stand for a missing "
                f"value, e.g. {{'bmi': [0]}}; got {type(missing_values).__name__}."
            )
        unknown = [c for c in missing_values if str(c) not in set(self.columns_)]
        if unknown:
            raise ParameterError(
                f"missing_values names columns the model was not fitted on: {unknown}. Its "
                f"columns: {excerpt(list(self.columns_), 400)}."
            )
        out = {}
        for column, values in missing_values.items():
            if isinstance(values, str) or not isinstance(values, Iterable):
                values = [values]  # one marker
            out[str(column)] = list(values)
        return out

    def to_dict(self) -> dict:
        """A JSON-ready description of the fitted model.

        Returns
        -------
        dict
            Format version 2: the parameters, ``classes`` sorted as ``classes_``,
            ``positive_class`` (the class the rules describe), the columns, the
            discretization, the learners' feature subsets and the rules with their training
            figures. :meth:`from_dict` restores the model exactly (an int ``random_state`` is
            kept; a ``RandomState`` is saved as None). ``n_jobs`` is saved as None: how many
            threads fitted the model is not part of it, so the same rules give the same JSON
            whatever threads fitted them.

        Examples
        --------
        >>> from libre_lib import LibreClassifier
        >>> from libre_lib.datasets import load_dataset
        >>> X, y, info = load_dataset("haberman")
        >>> model = LibreClassifier(positive_class=info.positive_class, random_state=0).fit(X, y)
        >>> str(LibreClassifier.from_dict(model.to_dict()).rules_) == str(model.rules_)
        True
        """
        check_is_fitted(self, "rules_")
        return {
            "format": MODEL_FORMAT,
            "format_version": MODEL_FORMAT_VERSION,
            "library_version": __version__,
            "params": {k: _jsonable(RUN_PARAMS.get(k, v), k) for k, v in self.get_params().items()},
            "classes": [_jsonable(c, "classes") for c in self.classes_],
            "positive_class": _jsonable(self.positive_class_, "positive_class"),
            "target": self.target_name_,
            "columns": list(self.columns_),
            "feature_names_in": hasattr(self, "feature_names_in_"),
            "discretization": self.discretization_.to_dict(),
            "feature_subsets": [list(s) for s in self.feature_subsets_],
            "n_candidates": self.n_candidates_,
            **({"auto_fallbacks": n} if (n := getattr(self, "auto_fallbacks_", 0)) else {}),
            **({"learner_factor": k} if (k := getattr(self, "learner_factor_", 1)) != 1 else {}),
            # bins thinned by the rows (AUTO_SIGNIFICANT_ROWS), not by the parameter
            **({"significant_cuts": True} if self._thinned_by_rows() else {}),
            "chosen": {name: _jsonable(getattr(self, name + "_"), name) for name in AUTO_CHOSEN},
            "rules": [
                rule_to_dict(r, s) for r, s in zip(self.rules_, self.rules_.stats, strict=True)
            ],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """The fitted model as human-readable JSON (:meth:`to_dict`); :meth:`from_json`
        restores it exactly.

        Parameters
        ----------
        indent : int or None, default=2
            ``json.dumps``'s indent; None writes one line.

        Returns
        -------
        str
        """
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict) -> LibreClassifier:
        """The fitted model :meth:`to_dict` described, checked as it is read.

        Parameters
        ----------
        data : dict
            A model description (format versions ``READABLE_FORMAT_VERSIONS``).

        Returns
        -------
        LibreClassifier
            Fitted: it predicts, explains and exports as the model that was saved.

        Raises
        ------
        ModelFormatError
            Not a libre-flows model, an unsupported format version, or a field that is
            missing or does not hold together (a hand-edited file), named in the message.
        """
        if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
            raise ModelFormatError(
                "Not a libre-flows model: the 'format' field is missing or wrong."
            )
        version = data.get("format_version")
        if isinstance(version, bool) or version not in READABLE_FORMAT_VERSIONS:
            readable = ", ".join(str(v) for v in READABLE_FORMAT_VERSIONS)
            raise ModelFormatError(
                f"Model format version {version!r} is not supported by this release "
                f"(it reads versions {readable}); retrain or upgrade libre-flows."
            )
        params = data.get("params")
        unknown = (
            sorted(set(params) - set(cls._get_param_names())) if isinstance(params, dict) else []
        )
        if unknown:
            saved = data.get("library_version", "an unknown release")
            raise ModelFormatError(
                f"The model has parameter(s) this release does not know: {excerpt(unknown)}. "
                f"It was saved by libre-flows {saved}; this is {__version__}: upgrade "
                "libre-flows to read it."
            )
        try:
            model = cls(**data["params"])
            model.classes_ = sorted_labels(label_array(data["classes"]))
            model.positive_class_ = data["positive_class"]
            model.target_name_ = data["target"]
            model.columns_ = list(data["columns"])
            model.n_features_in_ = len(model.columns_)
            if data.get("feature_names_in"):
                model.feature_names_in_ = np.asarray(model.columns_, dtype=object)
            model.discretization_ = Discretization.from_dict(data["discretization"])
            model.feature_subsets_ = [tuple(s) for s in data["feature_subsets"]]
            model.n_candidates_ = int(data["n_candidates"])
            model.auto_fallbacks_ = int(data.get("auto_fallbacks", 0))
            model.learner_factor_ = data.get("learner_factor", 1)
            thinned = data.get("significant_cuts", False)
            if not isinstance(thinned, bool):
                raise ValueError(f"significant_cuts {thinned!r} is not true or false")
            model.significant_cuts_ = bool(model.significant_cuts) or thinned
            if model.learner_factor_ not in (1, *LEARNER_FACTORS) or isinstance(
                model.learner_factor_, bool
            ):
                raise ValueError(
                    f"learner_factor {model.learner_factor_!r} is not 1 or one of {LEARNER_FACTORS}"
                )
            chosen = data.get("chosen") or {}
            model.auto_scores_ = None
            model.set_chosen(
                {name: chosen.get(name, _explicit(getattr(model, name), AUTO_FALLBACK[name]))
                 for name in AUTO_CHOSEN}
            )  # fmt: skip
            parsed = [rule_from_dict(r) for r in data["rules"]]
        except KeyError as exc:
            raise ModelFormatError(f"Malformed libre-flows model: missing field {exc}.") from None
        except (TypeError, ValueError, AttributeError, OverflowError, ParameterError) as exc:
            raise ModelFormatError(
                f"Malformed libre-flows model: a field has a bad value ({exc})."
            ) from None
        _check_model_fields(model, parsed)
        _check_rule_columns(parsed, model.discretization_)
        positive_label, negative_label = model._shown_classes()
        model.rules_ = RuleSet(
            tuple(r for r, _ in parsed),
            target=model.target_name_,
            positive_class=positive_label,
            negative_class=negative_label,
            stats=tuple(s for _, s in parsed),
        )
        return model

    @classmethod
    def from_json(cls, text: str) -> LibreClassifier:
        """The fitted model :meth:`to_json` wrote (see :meth:`from_dict`).

        Parameters
        ----------
        text : str
            The JSON text.

        Returns
        -------
        LibreClassifier

        Raises
        ------
        ModelFormatError
            Not valid JSON, or not a readable model (:meth:`from_dict`).
        """
        if isinstance(text, dict):
            raise ModelFormatError("from_json reads JSON text; for a dict, use from_dict.")
        if isinstance(text, os.PathLike) or (
            isinstance(text, str) and not text.lstrip().startswith("{") and os.path.isfile(text)
        ):
            raise ModelFormatError(
                f"from_json reads the JSON text, not a path: "
                f"LibreClassifier.from_json(Path({str(text)!r}).read_text())."
            )
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ModelFormatError(f"The model is not valid JSON: {exc}.") from None
        return cls.from_dict(data)


def sorted_labels(classes) -> np.ndarray:
    """Two labels in ``np.unique``'s order (by their text when they do not compare)."""
    first, second = classes
    try:
        swap = bool(second < first)
    except TypeError:
        swap = str(second) < str(first)
    return label_array([second, first] if swap else [first, second])


def _check_model_fields(model: LibreClassifier, parsed) -> None:
    """What a hand-edited model must still hold: every rule's training figures, and the
    discretized features among its columns (else predict fails later with a bare error)."""
    classes = list(model.classes_)
    if len(set(map(repr, classes))) != 2:
        raise ModelFormatError(
            f"Malformed libre-flows model: 'classes' must hold two different labels; got "
            f"{excerpt(classes)}."
        )
    positive = model.positive_class_
    if positive not in classes:  # one class against the rest: True of [False, True]
        raise ModelFormatError(
            f"Malformed libre-flows model: its positive class {excerpt(positive)} is not one "
            f"of its classes {excerpt(classes)}."
        )
    without = [n for n, (_, stats) in enumerate(parsed, start=1) if stats is None]
    if without:
        raise ModelFormatError(
            f"Malformed libre-flows model: rule {without[0]} has no 'stats' (its training "
            "figures); restore them or retrain."
        )
    unknown = [f.name for f in model.discretization_.features if f.name not in model.columns_]
    if unknown:
        raise ModelFormatError(
            f"Malformed libre-flows model: the discretization names {excerpt(unknown)}, which "
            f"are not among the model's columns {excerpt(model.columns_)}."
        )


def _check_rule_columns(parsed, discretization: Discretization) -> None:
    """Every rule tests features of the model's discretization, each with its own kind (a
    hand-edited model otherwise fails at predict time with a bare KeyError)."""
    kinds = {f.name: f.kind for f in discretization.features}
    for number, (rule, _) in enumerate(parsed, start=1):
        for condition in rule:
            kind = kinds.get(condition.feature)
            if kind is None:
                raise ModelFormatError(
                    f"Malformed libre-flows model: rule {number} tests column "
                    f"{excerpt(condition.feature)}, which is not one of the model's features "
                    f"{excerpt(list(kinds))}."
                )
            if kind != condition.kind:
                raise ModelFormatError(
                    f"Malformed libre-flows model: rule {number} tests column "
                    f"{excerpt(condition.feature)} as {condition.kind}, but the model "
                    f"discretized it as {kind}."
                )


def _gain(alpha):
    """``alpha`` as the set cover takes it: a float, or :data:`~libre_lib.selection.F1_GAIN`."""
    return alpha if alpha == F1_GAIN else float(alpha)


def _explicit(value, paper):
    """A parameter's value, the paper's when it is "auto"."""
    return paper if value == AUTO else value


def _best_auto_f1(model) -> float | None:
    """The best mean inner F1 of the "auto" choice behind ``model`` (None without one)."""
    scores = getattr(model, "auto_scores_", None)
    values = np.asarray((scores or {}).get("mean_f1", []), dtype=float)
    return float(np.nanmax(values)) if np.isfinite(values).any() else None


def auto_below_trivial_message(model, n_positive: float, n_negative: float) -> str | None:
    """:func:`below_trivial_message` for the "auto" choice behind ``model``, given the
    training rows' (weighted) class totals; None without an "auto" choice, and when the
    majority guard left no rule (then "No rule was learned" says why)."""
    top = _best_auto_f1(model)
    if top is None or (model.abstain and top <= 0 and not len(model.rules_)):
        return None
    total = n_positive + n_negative
    share = n_positive / total if total else 0.0
    return below_trivial_message(
        top, 2.0 * share / (1.0 + share), 'The best of the "auto" choice\'s combinations'
    )


def flag_every_row_f1(positive, weight=None) -> float:
    """The F1 of answering the positive class on every row: 2p / (1 + p) at (weighted)
    positive share p."""
    positive = np.asarray(positive, dtype=bool)
    weight = np.ones(positive.size) if weight is None else np.asarray(weight, dtype=float)
    total = float(weight.sum())
    share = float(weight[positive].sum()) / total if total > 0 else 0.0
    return 2.0 * share / (1.0 + share)


def below_trivial_message(
    top: float,
    trivial: float,
    best: str = "The best point of the grid",
    chosen: float | None = None,
) -> str | None:
    """What to say when the best mean inner F1 (``top``; ``best`` names whose) is below
    ``trivial``, the F1 of flagging every row (:func:`flag_every_row_f1`), or when the point
    the choice rule took (its mean inner F1 ``chosen``, fewer rules within the tolerance of
    the best) is: None when neither is."""
    if top >= trivial and chosen is not None and chosen < trivial:
        return (
            f"The chosen point (the fewest rules within the tolerance of the best) scored an "
            f"inner F1 of {chosen:.3f}, below the {trivial:.3f} of flagging every row as the "
            f"positive class; the best point scored {top:.3f}. The columns may hold little "
            "signal for this target: do not expect the rules to beat that trivial answer on "
            "new rows (score_tolerance=0 and standard_errors=0 choose the best point)."
        )
    if not top < trivial:
        return None
    return (
        f"{best} scored an inner F1 of {top:.3f}, below the {trivial:.3f} of flagging every "
        "row as the positive class: no setting found rules that beat that trivial answer on "
        "the inner folds' held-out rows, so the columns may hold little signal for this "
        "target. Do not expect the rules to beat it on new rows; check the features and the "
        "target. If the target depends on how columns combine (one column's effect reversed "
        "by another's, as in an exclusive or), bins cut on each column alone miss it: "
        "significant_cuts=True (model: significant_cuts in a spec) keeps a numeric column "
        "without a significant cut at its quartiles."
    )


def resolve_tolerance(
    score_tolerance, standard_errors, mean_scores, std_scores, n_splits: int
) -> float:
    """The choice's tolerance: max(``score_tolerance``, ``standard_errors`` x the standard
    error of the best mean score: the first best's std over the folds / sqrt(n_splits))."""
    best = int(np.argmax(np.asarray(mean_scores, dtype=float)))
    se = float(np.asarray(std_scores, dtype=float)[best]) / np.sqrt(n_splits)
    return max(float(score_tolerance), float(standard_errors) * se)


def choose_candidate(mean_scores, mean_rules, score_tolerance=0.0) -> int:
    """Index of the candidate to pick: among those whose mean score is at least the best mean
    score minus ``score_tolerance``, the one with the fewest mean rules, then the best mean
    score, then the first in order. ``score_tolerance=0`` is "best mean score, exact ties
    broken by fewer rules"."""
    if np.size(mean_scores) == 0:
        raise ValueError("no candidate to choose from")
    return int(choice_order(mean_scores, mean_rules, score_tolerance)[0])


def choice_order(mean_scores, mean_rules, score_tolerance=0.0) -> np.ndarray:
    """Indices of the candidates whose mean score is at least the best mean score minus
    ``score_tolerance``, in :func:`choose_candidate`'s order (fewest mean rules, then best mean
    score, then first in order): the first is its pick."""
    mean_scores = np.asarray(mean_scores, dtype=float)
    mean_rules = np.asarray(mean_rules, dtype=float)
    # rounded so that equal scores are not split by float noise
    eligible = np.round(mean_scores, 9) >= np.round(np.max(mean_scores) - score_tolerance, 9)
    index = np.flatnonzero(eligible)
    return index[np.lexsort((index, -mean_scores[index], mean_rules[index]))]


#: At most this many candidates outside the choice rule's tolerance that a refit check tries
#: after every accepted candidate's refit kept no rule (rounds 22 and 24, docs/benchmarks.md).
BEYOND_TOLERANCE = 10


def refit_order(order, mean_scores, mean_rules, ruled_share, pool=None) -> np.ndarray:
    """``order`` (candidates in the choice's order, the choice first) as a refit check follows
    it, given the share of inner folds in which each candidate kept at least one rule
    (``ruled_share``): all of it when the choice kept a rule in most inner folds (more than
    half), else the choice alone (an empty refit agrees with inner folds that mostly kept
    none). After it, should every refit of ``order`` keep no rule: the other candidates of
    ``pool`` (default: all) that kept a rule in most inner folds, best mean score first (then
    fewer mean rules, candidate order), at most :data:`BEYOND_TOLERANCE` of them (the
    twenty-second round: on data where the majority guard empties the refits of every accepted
    candidate, the rules the inner folds found next). "Most" rather than "every" inner fold:
    the twenty-fifth round (docs/benchmarks.md)."""
    order = np.asarray(order)
    kept = np.asarray(ruled_share, dtype=float) > 0.5
    if not kept[order[0]]:
        return order[:1]
    pool = np.arange(kept.size) if pool is None else np.asarray(pool)
    rest = pool[kept[pool] & ~np.isin(pool, order)]
    mean = np.asarray(mean_scores, dtype=float)[rest]
    rules = np.asarray(mean_rules, dtype=float)[rest]
    ranked = rest[np.lexsort((rest, rules, -np.where(np.isnan(mean), -np.inf, mean)))]
    return np.concatenate([order, ranked[:BEYOND_TOLERANCE]])


def training_f1(ruleset: RuleSet, n_positive: float) -> float:
    """The rule set's F1 on its training rows, from its rules' weighted training counts
    (``n_positive``: the positive rows' weight)."""
    caught = sum(s.new_positives for s in ruleset.stats)
    flagged = caught + sum(s.new_negatives for s in ruleset.stats)
    return 2 * caught / (flagged + n_positive) if flagged + n_positive else 0.0


def falls_short(ruleset: RuleSet, n_positive: float, inner: float) -> bool:
    """Whether a fitted rule set's training F1 (:func:`training_f1`) is more than
    :data:`BELOW_INNER` below ``inner``, the mean validation F1 its settings scored on inner
    folds (False without rules or without a finite ``inner``)."""
    if not len(ruleset) or not ruleset.stats or inner is None or not np.isfinite(inner):
        return False
    return training_f1(ruleset, n_positive) < inner - BELOW_INNER


def growing_factors(model: LibreClassifier) -> list[int]:
    """The multiples in :data:`LEARNER_FACTORS`, in turn, that draw more feature subsets than
    the fitted ``model`` holds (on few columns a larger ensemble draws no new subset, and its
    fit would be the same)."""
    drawn, factors = len(model.feature_subsets_), []
    for factor in LEARNER_FACTORS:
        grown = len(model.draw_subsets(model.discretization_, factor))
        if grown > drawn:
            drawn = grown
            factors.append(factor)
    return factors


def reaches(ruleset: RuleSet, n_positive: float, inner: float) -> bool:
    """Whether a fitted rule set keeps a rule and its training F1 is within
    :data:`BELOW_INNER` of ``inner`` (what a fit with more learners must reach to ship)."""
    return bool(len(ruleset)) and training_f1(ruleset, n_positive) >= inner - BELOW_INNER


#: Categories of one column, and positive rows, at which rules learned on four fifths of the
#: rows (the inner folds) and on all of them can well differ; a warning names them as causes.
UNSTABLE_CATEGORIES, UNSTABLE_POSITIVES = 20, 100


def _unstable_cause(model: LibreClassifier, n_positive: int) -> str:
    """Why the fit on all rows can find other rules than the inner folds' fits, named from
    what the fitted ``model`` saw (``n_positive``: its positive rows, not their weight): a
    column of many categories, few positive rows, or else a weak signal."""
    many = [
        (len(f.categories), f.name)
        for f in model.discretization_.features
        if f.kind == CATEGORICAL and len(f.categories) >= UNSTABLE_CATEGORIES
    ]
    causes = []
    if many:
        n, name = max(many, key=lambda c: c[0])
        causes.append(f"column {name_text(str(name))} holds {n} categories")
    if n_positive < UNSTABLE_POSITIVES:
        causes.append(f"only {n_positive:,} rows are positive")
    if causes:
        return " and ".join(causes) + ", which can do this"
    return (
        "with no column of many categories and with many positive rows, the signal the rules "
        "use is likely weak: fits on overlapping rows then pick different rules"
    )


def below_inner_message(
    model: LibreClassifier, n_positive: float, inner: float, positive_rows: int | None = None
) -> str | None:
    """The warning about a fitted model whose rule set :func:`falls_short` of ``inner``; None
    otherwise. It blames the learners' random columns only where more learners would have
    drawn other columns (:func:`growing_factors`). ``n_positive``: the positive rows' weight;
    ``positive_rows``: their number, where weights make it differ."""
    if not falls_short(model.rules_, n_positive, inner):
        return None
    f1 = training_f1(model.rules_, n_positive)
    start = (
        f"The rule set scores F1 {f1:.3f} on its training rows, far below the {inner:.3f} its "
        "settings averaged on the inner folds' validation rows"
    )
    if not growing_factors(model):
        return (
            f"{start}. Its learners already saw every set of columns they can draw, so more "
            "learners or another random_state would find the same rules: the fit on all the "
            "rows found other rules than the inner folds' fits did "
            f"({_unstable_cause(model, n_positive if positive_rows is None else positive_rows)}). "
            "Other settings, compared by LibreSearchCV, may do better."
        )
    return (
        f"{start}: this fit's learners, whose columns are drawn at random, most likely missed a "
        "combination of columns that the inner folds' learners used, and fits with "
        + " and ".join(str(k) for k in LEARNER_FACTORS)
        + " times n_estimators learners fell as short. Another random_state, or more "
        "learners (n_estimators), may find it."
    )


def auto_refit_order(scores: dict | None) -> np.ndarray:
    """The combinations of an "auto" choice (``auto_scores_``, indices into its ``params``) in
    the order :meth:`LibreClassifier.fit` refits them (:func:`refit_order`; the twenty-fourth
    round): the choice first. Empty without a choice, or for a choice made before the inner
    folds' rule counts were recorded."""
    if not scores or "ruled_folds" not in scores:
        return np.zeros(0, dtype=int)
    mean, std = scores["mean_f1"], scores["std_f1"]
    tolerance = resolve_tolerance(*AUTO_CHOICE, mean, std, scores["n_splits"])
    order = choice_order(mean, scores["mean_rules"], tolerance)
    share = np.asarray(scores["ruled_folds"], dtype=float) / scores["n_splits"]
    return refit_order(order, mean, scores["mean_rules"], share)


def refit_in_choice_order(fit_point, order) -> tuple:
    """A refit check on ``order`` (as :func:`refit_order` gives it): ``fit_point`` on its first
    candidate, then, while the models keep no rule, on the next ones. Returns (the model kept,
    its candidate index, the refits after the first); the first candidate's model when none
    keeps a rule. Only the kept model's warnings are given."""
    model, said = _fit_saying(fit_point, int(order[0]))
    if len(model.rules_):
        return _said(model, said), int(order[0]), 0
    for fallbacks, index in enumerate(order[1:], start=1):
        candidate, candidate_said = _fit_saying(fit_point, int(index))
        if len(candidate.rules_):
            return _said(candidate, candidate_said), int(index), fallbacks
    return _said(model, said), int(order[0]), len(order) - 1


def _fit_saying(fit_point, index: int) -> tuple:
    """``fit_point(index)`` and the warnings it gave, held back."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        model = fit_point(index)
    return model, said


def _with_said(first: list, then: list) -> list:
    """``first``'s warnings, then those of ``then`` not among them (by category and text)."""
    seen = {(w.category, str(w.message)) for w in first}
    return [*first, *(w for w in then if (w.category, str(w.message)) not in seen)]


#: The warnings :func:`_said` gave under a filter that shows a warning once per place, while
#: the filters stay those they were given under (Python forgets what it showed when they
#: change, as ``catch_warnings`` does), and at most :data:`GIVEN_KEPT` of them.
_GIVEN: set = set()
_GIVEN_UNDER: list = [None, 0, None]  # the filters list, its length, its first filter
GIVEN_KEPT = 10_000


def _said(model, said):
    """``model``, once the warnings its fit gave are given (through the caller's filters).
    Under Python's "default", "module" or "once" filter a warning shows once per text and
    place, not once per fit of a search's or cross-validation's loop: each fit records its
    warnings with ``catch_warnings``, which resets the registries Python keeps for this."""
    filters = warnings.filters
    under = [filters, len(filters), filters[0] if filters else None]
    if under[0] is not _GIVEN_UNDER[0] or under[1:] != _GIVEN_UNDER[1:]:
        _GIVEN.clear()  # the list is held, so no later list can take its id
        _GIVEN_UNDER[:] = under
    for w in said:
        module = w.filename[:-3] if w.filename.endswith(".py") else w.filename
        action = _filter_action(str(w.message), w.category, module, w.lineno)
        if action in ("default", "module", "once"):
            key = (str(w.message), w.category) + ((w.filename, w.lineno) * (action != "once"))
            if key in _GIVEN:
                continue
            if len(_GIVEN) >= GIVEN_KEPT:
                _GIVEN.clear()
            _GIVEN.add(key)
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return model


def _filter_action(text: str, category: type, module: str, lineno: int) -> str:
    """The action of the first of ``warnings.filters`` that matches, as Python picks it."""
    for action, message, kind, where, line in warnings.filters:
        if (
            (message is None or message.match(text))
            and issubclass(category, kind)
            and (where is None or where.match(module))
            and (line == 0 or line == lineno)
        ):
            return action
    return warnings.defaultaction


def f1_score(truth: np.ndarray, pred: np.ndarray, weight: np.ndarray | None = None) -> float:
    """F1 of the positive class from two bool masks (0 when neither has a positive); with
    ``weight``, every row counts its weight."""
    if weight is None:
        tp = float(np.sum(truth & pred))
        denominator = float(truth.sum() + pred.sum())
    else:
        tp = float(weight[truth & pred].sum())
        denominator = float(weight[truth].sum() + weight[pred].sum())
    return 2.0 * tp / denominator if denominator else 0.0


def weighted_rows(frame: pd.DataFrame, target: Target, sample_weight, owner: str):
    """``frame`` and ``target`` without the rows of weight 0, the target carrying the other
    rows' weights, and the mask of the rows kept; a :class:`ParameterError` for weights that
    are not one finite non-negative number per row, all zero, or that leave a class no
    weight."""
    weight = check_sample_weight(sample_weight, frame.shape[0], owner)
    keep = weight > 0
    if not keep.all():
        rows = np.flatnonzero(keep)
        frame = frame.iloc[rows].reset_index(drop=True)
        target = target.take(rows)
    for is_positive in (True, False):
        if not np.any(target.positive == is_positive):
            label = target.classes[1] if is_positive else target.classes[0]
            raise ParameterError(
                f"The 'sample_weight' parameter of {owner}.fit gives every row of class "
                f"{python_scalar(label)!r} weight 0: both classes need rows of weight > 0."
            )
    mean = float(weight[keep].mean())
    if mean < LIGHT_WEIGHTS:
        warnings.warn(
            f"The sample weights of {owner}.fit average {mean:.3g} over the {int(keep.sum())} "
            f"rows of weight > 0 (they sum to {float(weight.sum()):.3g}). A row of weight w "
            "counts as w rows, so ChiMerge's tests and the support floor see that few rows in "
            "all and may keep no bin or rule. If the weights are relative, scale them to a "
            "mean of 1 (sample_weight / sample_weight.mean()).",
            LibreWarning,
            stacklevel=user_stacklevel(),
        )
    weighted = Target(target.positive, target.classes, target.positive_class, weight[keep])
    return frame, weighted, keep


def _seed(random_state) -> int:
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _warn_untolerant(conflict_tolerance: float, n_bins: np.ndarray, subsets) -> None:
    """Warn when learners fall back to the paper's conflict test: their feature subsets' grids
    are too large for the tolerant kernel (:func:`~libre_lib.ensemble.tolerance_fits`)."""
    if conflict_tolerance <= 0:
        return
    too_large = [s for s in subsets if not tolerance_fits(n_bins, s)]
    if too_large:
        warnings.warn(
            f"{len(too_large)} of the {len(subsets)} learners' feature subsets (the largest "
            f"has {max(len(s) for s in too_large)} features) have too many bins in all for "
            f"conflict_tolerance={conflict_tolerance:g}: they learned with the paper's conflict "
            "test (conflict_tolerance=0). Lower max_features or max_intervals to keep the "
            "tolerance on every learner.",
            LibreWarning,
            stacklevel=user_stacklevel(),
        )


def _target_name(y, columns=()) -> str:
    """y's name for the rules' ``THEN`` clause: "y" when it has none, or when it is the name
    of a column of X (a y computed from that column keeps its name, and ``THEN a = 1`` would
    read as a condition on the column)."""
    name = getattr(y, "name", None)
    if name is None or str(name) in {str(c) for c in columns}:
        return "y"
    return str(name)


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
