"""libre_lib: interpretable Boolean rule sets with LIBRE (Mita et al., AISTATS 2020).

The algorithm library: discretization, inverse one-hot encoding, the bottom-up weak learner,
the ensemble, rule selection, the rule model and the scikit-learn estimator. It never imports
an orchestrator.
"""

from ._version import __version__
from .errors import (
    DataError,
    LibreError,
    LibreWarning,
    ModelFormatError,
    ParameterError,
    SchemaError,
)
from .estimator import LibreClassifier
from .rules import Condition, Interval, Rule, RuleSet, RuleStats
from .search import PAPER_GRID, LibreSearchCV

__all__ = [
    "PAPER_GRID",
    "Condition",
    "DataError",
    "Interval",
    "LibreClassifier",
    "LibreError",
    "LibreSearchCV",
    "LibreWarning",
    "ModelFormatError",
    "ParameterError",
    "Rule",
    "RuleSet",
    "RuleStats",
    "SchemaError",
    "__version__",
]
