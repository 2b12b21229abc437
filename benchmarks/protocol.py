"""The design / confirmation protocol of the quality studies.

The 14 development datasets are split once, before any study, into two halves of seven
(balanced in size, class imbalance and numeric / categorical mix). Every choice of a grid, a
default, a choice rule or a selection method is made on DESIGN only; CONFIRMATION is looked at
once the choice is fixed, and docs/benchmarks.md reports both halves, saying which is which.

australian and credit_approval are two versions of the same credit data (the Statlog copy and
the original with its missing values): they are kept in the same half so that the confirmation
half shares no data with the design half.

- design: adult (large, mixed, .24 positive), magic (large, numeric, .35), haberman (.26) and
  pima (.35) (small, numeric), tictactoe (.65, categorical), australian (.44, mixed) and
  credit_approval (.44, mixed, missing values);
- confirmation: bank (large, mixed, .12), spambase (4,601 rows, 57 numeric, .39), transfusion
  (.24), liver (.51) and banknote (.44) (small, numeric), votes (.39, categorical, missing
  values) and hepatitis (.21, mixed, missing values).

wdbc (569 rows, 30 numeric, .37; breast cancer, diagnostic) joined the design half later, for
the eighth study round (docs/benchmarks.md): the first real wide dataset of the development set,
so that choices about wide data can be made on the design half. The confirmation half did not
change.
"""

from __future__ import annotations

DESIGN = [
    "haberman",
    "pima",
    "tictactoe",
    "australian",
    "credit_approval",
    "magic",
    "adult",
    "wdbc",
]
CONFIRMATION = ["transfusion", "liver", "banknote", "votes", "hepatitis", "spambase", "bank"]
PAPER_EIGHT = [
    "haberman",
    "liver",
    "transfusion",
    "pima",
    "australian",
    "tictactoe",
    "bank",
    "adult",
]


def half_of(name: str) -> str:
    """'design' or 'confirmation'."""
    if name in DESIGN:
        return "design"
    if name in CONFIRMATION:
        return "confirmation"
    raise KeyError(f"{name!r} is not a development dataset")
