"""Speed and scale of LIBRE on synthetic data (the paper's Table "Runtime" and supplement).

    python benchmarks/scalability.py --quick          # about 2 minutes
    python benchmarks/scalability.py                  # the full grid (about an hour)

Every stage of LIBRE is compiled with numba on first use (cached in __pycache__ afterwards);
the workers warm the kernels up on a tiny problem before timing, so the figures are run times,
not compile times.

Data: continuous features uniform in [0, 100]; labels either balanced random (the paper's setup,
no signal), random with a given positive rate (supplement: imbalance 0.01 and 0.1), or the
learnable concept ``(x0 >= 50 & x1 < 30) | x2 >= 90`` with 5 % of the labels flipped
(``benchmarks/synthetic.py``).

Every measurement runs in a fresh subprocess so that its peak RSS (``ru_maxrss``) is its own:

* ``stages``: discretization (ChiMerge + bin codes), distinct records, one weak learner on the
  first 10 features (``learn_subset``, the paper's "time of one weak learner") and selection of
  that learner's points (filter + weighted set cover);
* ``fit``: a full ``LibreClassifier(n_estimators=20, max_features=5).fit``;
* ``ripper`` (wittgenstein, if installed) and ``tree`` (scikit-learn DecisionTree) on the same
  data, stopped after ``--budget`` seconds ("> budget").

With the library defaults (``chi2_threshold=4.6, max_intervals=3``) random labels leave few bins
per feature, so the random-label rows are also run with a forced fine discretization
(``chi2_threshold=0, max_intervals=8``: every feature cut into 8 intervals), which gives a
lattice comparable to the paper's.

The table is printed and written to the "Speed and scale" section of docs/benchmarks.md
(between the ``scalability`` markers), with the machine and the exact command; a log-log plot of
time against records goes to docs/scalability.png when matplotlib is installed
(``pip install -e .[bench]``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from _machine import cpu_model, ram_gib
from synthetic import make_frame

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
PLOT = ROOT / "docs" / "scalability.png"
SECTION = "## Speed and scale"
BEGIN, END = "<!-- scalability:begin -->", "<!-- scalability:end -->"

DEFAULT = {"chi2_threshold": 4.6, "max_intervals": 3}
FINE = {"chi2_threshold": 0.0, "max_intervals": 8}
# Paper, Table "Runtime": one LIBRE weak learner, random balanced labels, 10 features.
PAPER_LEARNER = {10_000: 5, 100_000: 44, 500_000: 209, 1_000_000: 399}
PAPER_RIPPER = {10_000: 1, 100_000: 7, 500_000: 39, 1_000_000: 101}
# Research notes A.10: the authors' published code, one learner on 10k x 10 (thr 6).
AUTHORS_10K = {"random": 391, "learnable": 713}


@dataclass(frozen=True)
class Data:
    n: int
    features: int = 10
    label: str = "learnable"  # "random" or "learnable"
    positive_rate: float = 0.5  # random labels only
    seed: int = 0

    @property
    def name(self) -> str:
        if self.label == "learnable":
            return f"learnable, {self.features} features"
        rate = "" if self.positive_rate == 0.5 else f", positives {self.positive_rate:g}"
        return f"random{rate}, {self.features} features"


@dataclass(frozen=True)
class Series:
    """One line of the table per record count: a data family with LIBRE's discretization."""

    key: str
    data: Data
    discretization: dict = field(default_factory=lambda: dict(DEFAULT))
    peers: bool = True

    @property
    def title(self) -> str:
        d = self.discretization
        how = "defaults" if d == DEFAULT else f"thr {d['chi2_threshold']:g}, ≤{d['max_intervals']}"
        return f"{self.data.name} ({how})"


# -- data and workers (run in subprocesses) -------------------------------------------------------


def make_data(data: Data):
    """The rows of ``data`` (benchmarks/synthetic.py draws them)."""
    return make_frame(data.n, data.features, data.label, data.positive_rate, data.seed)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def warm_up() -> float:
    """Load (or compile, on the very first run) the numba kernels on a tiny problem; returns
    the seconds it took, reported as ``warm-up``."""
    import warnings

    from libre_lib import LibreClassifier, LibreWarning

    t0 = time.perf_counter()
    frame, y = make_data(Data(300, label="learnable", seed=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        LibreClassifier(n_estimators=3, random_state=0).fit(frame, y)
    return time.perf_counter() - t0


def work_stages(data: Data, discretization: dict) -> dict:
    from libre_lib.discretization import fit_discretization
    from libre_lib.encoding import distinct_records
    from libre_lib.ensemble import learn_subset
    from libre_lib.selection import select_rules

    out = {"warm_up": warm_up()}
    frame, y = make_data(data)
    t0 = time.perf_counter()
    disc = fit_discretization(
        frame, y, [False] * data.features, discretization["chi2_threshold"],
        discretization["max_intervals"],
    )  # fmt: skip
    codes = disc.transform(frame)
    t1 = time.perf_counter()
    n_bins = disc.n_bins
    records = distinct_records(codes, n_bins, y.astype(float), (~y).astype(float))
    t2 = time.perf_counter()
    subset = range(min(10, len(disc.features)))
    candidates = learn_subset(records, n_bins, subset)
    t3 = time.perf_counter()
    selection = select_rules(candidates, records, n_bins, alpha=0.7, top_k=200,
                             min_local_support=0.05)  # fmt: skip
    t4 = time.perf_counter()
    sub = list(subset)
    projected = distinct_records(
        records.codes[:, sub], n_bins[sub], records.positive_weight, records.negative_weight
    )
    out.update(
        discretize=t1 - t0,
        encode=t2 - t1,
        learner=t3 - t2,
        selection=t4 - t3,
        bins=[int(b) for b in n_bins[: min(10, n_bins.size)]],
        distinct_pos=int((projected.positive_weight > 0).sum()),
        distinct_neg=int((projected.negative_weight > 0).sum()),
        points=len(candidates),
        rules=int(selection.indices.size),
    )
    return out


def work_fit(data: Data, discretization: dict) -> dict:
    import warnings

    from libre_lib import LibreClassifier, LibreWarning

    warm_up()
    frame, y = make_data(data)
    clf = LibreClassifier(n_estimators=20, max_features=5, random_state=0, **discretization)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LibreWarning)
        clf.fit(frame, y)
    fit = time.perf_counter() - t0
    pred = clf.predict(frame).astype(bool)
    tp = float((pred & y).sum())
    f1 = 2 * tp / (pred.sum() + y.sum()) if (pred.sum() + y.sum()) else 0.0
    return {"fit": fit, "fit_rules": len(clf.rules_), "train_f1": f1}


def work_ripper(data: Data) -> dict:
    import wittgenstein as lw

    frame, y = make_data(data)
    frame["y"] = y.astype(int)
    t0 = time.perf_counter()
    model = lw.RIPPER(random_state=0)
    model.fit(frame, class_feat="y", pos_class=1)
    return {"ripper": time.perf_counter() - t0, "ripper_rules": len(model.ruleset_)}


def work_tree(data: Data) -> dict:
    from sklearn.tree import DecisionTreeClassifier

    frame, y = make_data(data)
    t0 = time.perf_counter()
    tree = DecisionTreeClassifier(random_state=0).fit(frame.to_numpy(), y)
    return {"tree": time.perf_counter() - t0, "tree_leaves": int(tree.get_n_leaves())}


def worker(spec: dict) -> None:
    data = Data(**spec["data"])
    kind = spec["kind"]
    if kind == "stages":
        out = work_stages(data, spec["discretization"])
    elif kind == "fit":
        out = work_fit(data, spec["discretization"])
    elif kind == "ripper":
        out = work_ripper(data)
    elif kind == "tree":
        out = work_tree(data)
    else:
        raise ValueError(kind)
    out[f"{kind}_rss_mb"] = _peak_rss_mb()
    print(json.dumps(out))


# -- the driver -----------------------------------------------------------------------------------


def run_worker(kind: str, series: Series, timeout: float) -> dict | None:
    """Result of one measurement, or None when it ran out of time (or memory)."""
    spec = {"kind": kind, "data": asdict(series.data), "discretization": series.discretization}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        print(f"  {kind} failed: {tail[0]}", file=sys.stderr)
        return {"error": tail[0]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def have_wittgenstein() -> bool:
    try:
        import wittgenstein  # noqa: F401
    except ImportError:
        return False
    return True


def machine() -> dict:
    cpu = cpu_model()
    gib = ram_gib()
    ram = "unknown" if gib is None else f"{gib:.1f} GiB"
    import pandas
    import sklearn

    info = {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram": ram,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pandas.__version__,
        "scikit-learn": sklearn.__version__,
    }
    try:
        import wittgenstein

        info["wittgenstein"] = getattr(wittgenstein, "__version__", "installed")
    except ImportError:
        info["wittgenstein"] = "not installed"
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        info["commit"] = commit
    except (OSError, subprocess.CalledProcessError):
        pass
    return info


def grid(quick: bool, records: list[int] | None) -> list[tuple[Series, list[int]]]:
    big = [10_000, 100_000, 500_000, 1_000_000]
    if quick:
        rows = [
            (Series("random", Data(0, label="random")), [10_000, 100_000]),
            (Series("random-fine", Data(0, label="random"), dict(FINE), peers=False), [10_000]),
            (Series("learnable", Data(0)), [10_000, 100_000]),
            (Series("learnable-50f", Data(0, features=50), peers=False), [100_000]),
        ]
        return [(s, records) for s, _ in rows] if records else rows
    top = [100_000, 1_000_000]
    small = [10_000, 100_000]
    fine = dict(FINE)
    rows = [
        (Series("random", Data(0, label="random")), big),
        (Series("learnable", Data(0)), big),
        (Series("learnable-20f", Data(0, features=20), peers=False), top),
        (Series("learnable-50f", Data(0, features=50), peers=False), top),
        (Series("random-fine", Data(0, label="random"), fine, peers=False), [*small, 1_000_000]),
        (Series("random-0.1", Data(0, label="random", positive_rate=0.1), fine, False), small),
        (Series("random-0.01", Data(0, label="random", positive_rate=0.01), fine, False), small),
    ]
    if records:
        rows = [(s, records) for s, _ in rows]
    return rows


def fmt_s(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:.0f}"


def ratio(numerator, denominator) -> str:
    if isinstance(numerator, (int, float)) and isinstance(denominator, (int, float)):
        return f"{numerator / max(denominator, 1e-9):.1f}×"
    if isinstance(numerator, str) and numerator.startswith(">") and denominator:
        return f"> {float(numerator[1:].strip().rstrip('s')) / denominator:.1f}×"
    return "–"


def measure(args) -> list[dict]:
    rows = []
    peer_over = {}  # (data family, peer) -> smallest n that ran out of time
    wittgenstein_ok = have_wittgenstein()
    for series, records in grid(args.quick, args.records):
        if args.series and series.key not in args.series:
            continue
        for n in records:
            s = Series(
                series.key,
                Data(n, series.data.features, series.data.label, series.data.positive_rate),
                series.discretization,
                series.peers,
            )
            row = {"series": s.key, "title": s.title, "n": n, "features": s.data.features}
            print(f"{s.title}, {n:,} records ...", file=sys.stderr, flush=True)
            for kind in ("stages", "fit"):
                got = run_worker(kind, s, args.timeout)
                if got is None:
                    row[kind if kind == "fit" else "learner"] = f"> {args.timeout:.0f} s"
                else:
                    row.update(got)
            if s.peers and not args.no_peers:
                family = (s.data.label, s.data.features, s.data.positive_rate)
                for peer in ("ripper", "tree"):
                    if peer == "ripper" and not wittgenstein_ok:
                        row[peer] = "not installed"
                        continue
                    if peer_over.get((family, peer), np.inf) <= n:
                        row[peer] = f"> {args.budget:.0f} s"
                        continue
                    got = run_worker(peer, s, args.budget)
                    if got is None:
                        row[peer] = f"> {args.budget:.0f} s"
                        peer_over[(family, peer)] = n
                    else:
                        row.update(got)
            rows.append(row)
            print("  " + json.dumps(row), file=sys.stderr, flush=True)
    return rows


def table(rows: list[dict]) -> str:
    head = (
        "| data (discretization) | records | bins (first 10 features) | distinct +/− | "
        "discretize s | encode s | one learner s | points | selection s | fit (20 learners) s "
        "| peak RSS MB (stages / fit) | RIPPER s | tree s | RIPPER ÷ fit | tree ÷ fit |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        bins = r.get("bins")
        bins_txt = ",".join(str(b) for b in bins) if bins else "–"
        distinct = f"{r['distinct_pos']:,} / {r['distinct_neg']:,}" if "distinct_pos" in r else "–"
        rss = f"{fmt_s(r.get('stages_rss_mb'))} / {fmt_s(r.get('fit_rss_mb'))}"
        lines.append(
            f"| {r['title']} | {r['n']:,} | {bins_txt} | {distinct} | "
            f"{fmt_s(r.get('discretize'))} | {fmt_s(r.get('encode'))} | "
            f"{fmt_s(r.get('learner'))} | {r.get('points', '–')} | {fmt_s(r.get('selection'))} | "
            f"{fmt_s(r.get('fit'))} | {rss} | {fmt_s(r.get('ripper'))} | {fmt_s(r.get('tree'))} | "
            f"{ratio(r.get('ripper'), r.get('fit'))} | {ratio(r.get('tree'), r.get('fit'))} |"
        )
    return "\n".join(lines)


def paper_table(rows: list[dict]) -> str:
    """The paper's Table "Runtime" next to ours (one learner, random balanced labels)."""
    lines = [
        "| records | paper: LIBRE one learner s | ours, one learner s (defaults / fine) "
        "| paper ÷ ours (fine) | paper: RIPPER-k s | ours: RIPPER s |",
        "|---|---|---|---|---|---|",
    ]
    by = {(r["series"], r["n"]): r for r in rows}
    for n, paper in PAPER_LEARNER.items():
        default, fine = by.get(("random", n), {}), by.get(("random-fine", n), {})
        if not default and not fine:
            continue
        lines.append(
            f"| {n:,} | {paper} | {fmt_s(default.get('learner'))} / {fmt_s(fine.get('learner'))} "
            f"| {ratio(paper, fine.get('learner'))} | {PAPER_RIPPER[n]} | "
            f"{fmt_s(default.get('ripper'))} |"
        )
    authors = []
    for label, key in (("random", "random-fine"), ("learnable", "learnable")):
        ours = by.get((key, 10_000), {}).get("learner")
        if isinstance(ours, float):
            authors.append(
                f"{label}: {AUTHORS_10K[label]} s vs {fmt_s(ours)} s "
                f"({AUTHORS_10K[label] / ours:,.0f}× faster)"
            )
    if authors:
        lines.append("")
        lines.append(
            "One learner at 10k × 10, the authors' published code (research notes A.10, not "
            "re-run here) against ours: " + "; ".join(authors) + "."
        )
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    series = {}
    for r in rows:
        series.setdefault(r["series"], []).append(r)
    for key, rs in series.items():
        for what, style in (("learner", "-o"), ("fit", "--s")):
            pts = [(r["n"], r[what]) for r in rs if isinstance(r.get(what), float)]
            if len(pts) >= 2:
                ax.plot(*zip(*pts, strict=True), style, label=f"{key}: {what}")
        if key in ("random", "learnable"):
            for peer, style in (("ripper", ":^"), ("tree", ":v")):
                pts = [(r["n"], r[peer]) for r in rs if isinstance(r.get(peer), float)]
                if len(pts) >= 2:
                    ax.plot(*zip(*pts, strict=True), style, label=f"{key}: {peer}")
    ns = sorted(PAPER_LEARNER)
    ax.plot(ns, [PAPER_LEARNER[n] for n in ns], "k-.", label="paper: one learner")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("records")
    ax.set_ylabel("seconds")
    ax.set_title("LIBRE time vs records (log-log)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return str(path.relative_to(ROOT))


def warm_up_note(rows: list[dict]) -> str:
    times = sorted(r["warm_up"] for r in rows if isinstance(r.get("warm_up"), float))
    if not times:
        return "not measured"
    median = times[len(times) // 2]
    note = f"median {median:.1f} s, loading the cached kernels"
    if times[-1] > 5 * median:
        note += f"; up to {times[-1]:.0f} s when they were compiled anew"
    return note


def render(rows: list[dict], info: dict, command: str, image: str | None, args) -> str:
    mach = ", ".join(f"{k} {v}" for k, v in info.items())
    notes = [
        f"Command: `{command}`",
        "",
        f"Machine: {mach}.",
        "",
        "Times in seconds, one run each; every cell is a fresh process. `discretize` = ChiMerge "
        "+ bin codes, `encode` = distinct records, `one learner` = `learn_subset` on the first "
        "10 features, `selection` = filter + weighted set cover of that learner's points, `fit` "
        "= `LibreClassifier(n_estimators=20, max_features=5, random_state=0).fit` (sequential). "
        "Each worker first fits a tiny model so that numba's compiled kernels are loaded "
        f"(`warm-up`, not counted: {warm_up_note(rows)}). "
        f"Peers get {args.budget:.0f} s; a peer that ran out of time at some size is not re-run "
        "at larger sizes. `÷ fit` is the peer's time over LIBRE's full fit (> 1: LIBRE faster).",
        "",
        table(rows),
        "",
        "Paper comparison (random balanced labels, 10 features):",
        "",
        paper_table(rows),
    ]
    if not have_wittgenstein():
        notes += ["", "RIPPER was not measured: `wittgenstein` is not installed."]
    if image:
        notes += ["", f"![time vs records]({Path(image).name})"]
    return "\n".join(notes)


def write_doc(body: str, path: Path = DOC) -> None:
    block = f"{BEGIN}\n{body}\n{END}"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    if BEGIN in text and END in text:
        start, stop = text.index(BEGIN), text.index(END) + len(END)
        text = text[:start] + block + text[stop:]
    elif SECTION in text:
        at = text.index(SECTION) + len(SECTION)
        text = text[:at] + "\n\n" + block + "\n" + text[at:]
    else:
        text = text.rstrip("\n") + f"\n\n{SECTION}\n\n{block}\n"
    from libre_lib.ops.files import atomic_write_text

    atomic_write_text(path, text)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small grid, about 2 minutes")
    parser.add_argument("--records", type=int, nargs="+", help="override the record counts")
    parser.add_argument("--series", nargs="+", help="only these series (keys, e.g. learnable)")
    parser.add_argument("--budget", type=float, help="seconds for RIPPER / tree (default 120)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per LIBRE run")
    parser.add_argument("--no-peers", action="store_true", help="skip RIPPER and the tree")
    parser.add_argument("--no-doc", action="store_true", help="do not update docs/benchmarks.md")
    parser.add_argument("--json", type=Path, help="also write the raw rows here")
    parser.add_argument("--from-json", type=Path, help="re-render the doc from a --json file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    if args.budget is None:
        args.budget = 20.0 if args.quick else 120.0
    if not have_wittgenstein():
        print("wittgenstein is not installed: RIPPER is skipped.", file=sys.stderr)
    command = "python benchmarks/scalability.py " + " ".join(sys.argv[1:])
    started = time.perf_counter()
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        info, rows, command = saved["machine"], saved["rows"], saved.get("command", command)
    else:
        info = machine()
        rows = measure(args)
    print(table(rows))
    print()
    print(paper_table(rows))
    print(f"\n({time.perf_counter() - started:.0f} s in all)", file=sys.stderr)
    if args.json:
        saved = {"machine": info, "rows": rows, "command": command}
        from libre_lib.ops.files import atomic_write_text

        atomic_write_text(args.json, json.dumps(saved, indent=1))
    if not args.no_doc:
        image = plot(rows, PLOT)
        write_doc(render(rows, info, command.strip(), image, args))
        print(f"updated {DOC.relative_to(ROOT)}" + (f" and {image}" if image else ""))


if __name__ == "__main__":
    main()
