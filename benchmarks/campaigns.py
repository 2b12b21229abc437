"""Crash, corruption and concurrency campaigns: re-runnable checks of what docs/operations.md
("What is guaranteed") promises, on a real store in a temporary folder.

    python benchmarks/campaigns.py kill [--quick] [--spec SPEC] [--kills N] [--server embedded]
    python benchmarks/campaigns.py corrupt [--quick] [--spec SPEC]
    python benchmarks/campaigns.py concurrent [--quick]
    python benchmarks/campaigns.py all --quick

kill        SIGKILLs `libre train` at a series of delays spread over one run's duration (each
            killed run trains a new model, with --force, so kills land in stage writes,
            registration and promotion; every other kill waits after its delay until a temp
            file or folder shows a write in progress), then re-runs it. After each kill: every
            Parquet file matches its sidecar or is recomputed by the re-run, the champion is a
            complete version (its checksums verify), and no Prefect server outlives the command
            (--server embedded: each run starts its own, as without PREFECT_API_URL). At the end
            the leftovers are removed by the clean-up a training run does, once stale (here:
            with no age bound, as their writers are dead), and a --force run of the first spec
            gives the model a run on a fresh store gives.
corrupt     trains, damages stage files and sidecars in several ways and one registered
            model.json, re-runs: every damaged artifact is detected, quarantined and recomputed,
            the model is unchanged, and loading the damaged version fails naming it.
concurrent  processes register and promote versions of one pipeline at once while others load
            the champion, and write and read the same artifacts at once: no version lost or
            duplicated, no load failed or saw a partial file, every artifact matches its sidecar.
            Without --quick also runs identical `libre train` runs at once (one version).

Each campaign prints its measured counts and a verdict and exits 1 if a check failed; --json FILE
saves the counts. --quick is a small version of each (haberman, fewer kills/processes; one
Prefect server shared by the runs).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import yaml

from libre_lib.ops.artifacts import ArtifactStore, fingerprint_file
from libre_lib.ops.cleanup import RUN_FILE, clean_store, incomplete_runs
from libre_lib.ops.files import is_temp_name
from libre_lib.ops.registry import TEMP_PREFIX, ModelRegistry, RegistryError

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "deployments" / "specs"
SIDECAR = ".sha256"
TAG = "LIBRE_CAMPAIGN_RUN"  # marks every process a campaign run starts (to find survivors)
LIBRE = "import sys; from libre_flows.flows.cli import main; sys.argv[0] = 'libre'; main()"


# --------------------------------------------------------------------------- the store


def write_spec(folder: Path, source: Path, **model) -> Path:
    """A copy of ``source`` with its data path made absolute, its store in ``folder/store``
    and ``model`` settings changed."""
    raw = yaml.safe_load(source.read_text())
    raw["data"]["path"] = str((source.parent / raw["data"]["path"]).resolve())
    raw["store"] = str(folder / "store")
    raw.setdefault("model", {}).update(model)
    suffix = "-".join(f"{k}{v}" for k, v in model.items()) or "base"
    path = folder / f"{raw['name']}-{suffix}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def parquet_pairs(store: Path) -> tuple[int, list[str]]:
    """(artifacts checked, those whose file does not match its sidecar) under ``store``."""
    bad, n = [], 0
    for path in sorted(store.rglob("*.parquet")):
        if is_temp_name(path.name):
            continue
        n += 1
        try:
            record = json.loads(path.with_name(path.name + SIDECAR).read_text())
            ok = (
                path.stat().st_size == record["size"] and fingerprint_file(path) == record["sha256"]
            )
        except (OSError, ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            bad.append(str(path.relative_to(store)))
    return n, bad


def leftovers(store: Path) -> dict[str, set[Path]]:
    """What crashed runs left: temp files, temp version folders, run folders without run.json."""
    models = store / "models"
    return {
        "temps": {p for p in store.rglob(".*.tmp-*") if is_temp_name(p.name)},
        "temp_versions": set(models.glob(f"*/{TEMP_PREFIX}*")) if models.is_dir() else set(),
        "incomplete_runs": set(incomplete_runs(store)),
    }


def champion_state(store: Path, pipeline: str) -> str:
    """'complete <version>' if the champion's model and contract load with their checksums
    verified, 'none' without a champion, else the error."""
    registry = ModelRegistry(store)
    try:
        champion = registry.champion(pipeline)
        if champion is None:
            return "none"
        registry.load_model(pipeline)
        registry.load_contract(pipeline)
    except Exception as exc:  # any failure is the finding
        return f"broken: {type(exc).__name__}: {exc}"
    return f"complete {champion.version}"


def latest_summary(store: Path, pipeline: str) -> dict:
    """The run.json of the pipeline's newest finished run."""
    runs = sorted((store / "runs" / pipeline).glob(f"*/{RUN_FILE}"))
    return json.loads(runs[-1].read_text()) if runs else {}


# --------------------------------------------------------------------------- processes


@contextlib.contextmanager
def prefect_server(kind: str):
    """The environment of campaign runs: a server shared by all (its URL exported), or none
    (each run starts its own embedded server, as without PREFECT_API_URL)."""
    home = Path(tempfile.mkdtemp(prefix="libre-campaign-prefect-"))
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env |= {
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "LIBRE_SERVER": "embedded",  # never a local server (`libre server start`) that may run
    }
    try:
        if kind == "embedded":
            yield env
            return
        with temporary_environ(env):  # Prefect reads its settings (PREFECT_HOME) on import
            from prefect.server.api.server import SubprocessASGIServer

            from libre_flows.flows.embedded_server import guard_embedded_server

            guard_embedded_server()  # the server dies with this process
            server = SubprocessASGIServer()
            server.start(timeout=180)
        try:
            yield env | {"PREFECT_API_URL": server.api_url}
        finally:
            server.stop()
    finally:
        shutil.rmtree(home, ignore_errors=True)


@contextlib.contextmanager
def temporary_environ(env: dict[str, str]):
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def start_train(
    spec: Path, env: dict, tag: str, force: bool = False, extra: list[str] | None = None
) -> subprocess.Popen:
    args = [sys.executable, "-c", LIBRE, "train", str(spec), *(["--force"] if force else [])]
    args += extra or []
    return subprocess.Popen(
        args,
        env=env | {TAG: tag},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def run_train(
    spec: Path, env: dict, force: bool = False, timeout: float = 900, extra: list | None = None
) -> tuple[int, str]:
    proc = start_train(spec, env, uuid.uuid4().hex, force, extra)
    out, _ = proc.communicate(timeout=timeout)
    return proc.returncode, out


def tagged(tag: str) -> list[int]:
    """Live (non-zombie) processes whose environment carries ``TAG=tag``."""
    found = []
    marker = f"{TAG}={tag}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def survivors(tag: str, grace: float) -> int:
    """How many processes of a killed run still live ``grace`` seconds later (then killed)."""
    deadline = time.monotonic() + grace
    while tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = tagged(tag)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return len(left)


# --------------------------------------------------------------------------- kill


def _writing(store: Path, known: set[str]) -> bool:
    """Whether a temp file or folder not in ``known`` exists in the store (a write)."""
    for _, dirs, files in os.walk(store):
        if any(".tmp-" in name and name not in known for name in (*dirs, *files)):
            return True
    return False


def wait_for_a_write(proc: subprocess.Popen, store: Path, seconds: float) -> bool:
    """Wait (at most ``seconds``) until the run is seen writing a file; False if it was not."""
    known = {p.name for kind in leftovers(store).values() for p in kind}
    deadline = time.monotonic() + seconds
    while proc.poll() is None and time.monotonic() < deadline:
        if _writing(store, known):
            return True
    return False


def kill_campaign(args, work: Path) -> dict:
    source = Path(args.spec)
    base = write_spec(work, source)
    store = work / "store"
    pipeline = yaml.safe_load(base.read_text())["name"]
    counts = {"kills": 0, "kills_in_a_write": 0, "kills_after_the_run_ended": 0,
              "unmatched_after_kill": 0, "unmatched_after_rerun": 0, "champion_complete": 0,
              "orphaned_processes": 0, "reruns_ok": 0,
              "temps": 0, "temp_versions": 0, "incomplete_runs": 0}  # fmt: skip
    failures: list[str] = []
    with prefect_server(args.server) as env:
        code, out = run_train(base, env)
        if code:
            raise SystemExit(f"the first run failed:\n{out[-3000:]}")
        started = time.perf_counter()  # a second run: the first also set Prefect's database up
        code, out = run_train(base, env, force=True)
        full = time.perf_counter() - started
        if code:
            raise SystemExit(f"the second run failed:\n{out[-3000:]}")
        first = champion_state(store, pipeline)
        first_sha = ModelRegistry(store).champion(pipeline).model_sha256  # reported, not checked
        print(f"kill: {pipeline}, server {args.server}, one run {full:.1f} s, champion {first}")
        for i in range(args.kills):
            delay = full * (i + 0.5) / args.kills
            spec = write_spec(work, source, random_state=1000 + i)
            tag = uuid.uuid4().hex
            before = leftovers(store)
            proc = start_train(spec, env, tag, force=True)
            time.sleep(delay)
            in_write = i % 2 == 1 and wait_for_a_write(proc, store, full)
            finished = proc.poll() is not None
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            orphans = survivors(tag, args.grace)
            left = {k: len(v - before[k]) for k, v in leftovers(store).items()}
            checked, bad = parquet_pairs(store)
            champion = champion_state(store, pipeline)
            code, out = run_train(spec, env)
            _, bad_after = parquet_pairs(store)
            after = champion_state(store, pipeline)
            counts["kills"] += 1
            counts["kills_in_a_write"] += bool(in_write)
            counts["kills_after_the_run_ended"] += finished
            counts["orphaned_processes"] += orphans
            counts["unmatched_after_kill"] += len(bad)
            counts["unmatched_after_rerun"] += len(bad_after)
            counts["champion_complete"] += champion.startswith("complete")
            counts["reruns_ok"] += code == 0 and after.startswith("complete")
            for key, value in left.items():
                counts[key] += value
            when = " (had finished)" if finished else " in a write" if in_write else ""
            print(
                f"  kill {i + 1} at {delay:5.1f} s{when}: "
                f"{left['temps']} temps, {left['temp_versions']} temp versions, "
                f"{left['incomplete_runs']} run folders without run.json, "
                f"{len(bad)}/{checked} unmatched Parquet, champion {champion}, "
                f"{orphans} processes alive {args.grace:.0f} s later; re-run "
                f"{'ok' if code == 0 else 'FAILED'}, {len(bad_after)} unmatched, champion {after}",
                flush=True,
            )
            if code:
                failures.append(f"re-run after kill {i + 1} failed:\n{out[-2000:]}")
        done = clean_store(store, max_age_s=0)
        counts["removed_by_clean_store"] = len(done.paths)
        counts["leftovers_after_clean_store"] = sum(map(len, leftovers(store).values()))
        # the store the kills went through and a fresh one give the same model now (both runs
        # use the same code; comparing with the first run would fail if the code changed since)
        models = []
        for where, extra in (
            (store, []),
            (work / "fresh-store", ["--store", str(work / "fresh-store")]),
        ):
            code, out = run_train(base, env, force=True, extra=extra)
            if code:
                failures.append(f"the final run on {where.name} failed:\n{out[-2000:]}")
                break
            version = latest_summary(where, pipeline)["model_version"]
            models.append(ModelRegistry(where).get(pipeline, version).model_sha256)
        counts["same_model_as_a_fresh_store"] = int(len(models) == 2 and models[0] == models[1])
        counts["same_model_as_the_first_run"] = int(models[:1] == [first_sha])
    checks = {
        "no unmatched Parquet after a re-run": counts["unmatched_after_rerun"] == 0,
        "the champion is complete after every kill": counts["champion_complete"] == counts["kills"],
        "every re-run succeeded": counts["reruns_ok"] == counts["kills"],
        "no process outlived a killed run": counts["orphaned_processes"] == 0,
        "clean_store removed every leftover": counts["leftovers_after_clean_store"] == 0,
        "a --force run gives the model a fresh store gives": (
            counts["same_model_as_a_fresh_store"] == 1
        ),
    }
    return {"counts": counts, "checks": checks, "failures": failures}


# --------------------------------------------------------------------------- corrupt


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _drop_sidecar(path: Path) -> None:
    path.with_name(path.name + SIDECAR).unlink()


def _garble_sidecar(path: Path) -> None:
    path.with_name(path.name + SIDECAR).write_text("{not json")


DAMAGE = {
    "truncated": _truncate,
    "byte flipped": _flip,
    "emptied": _empty,
    "sidecar deleted": _drop_sidecar,
    "sidecar garbled": _garble_sidecar,
}


def corrupt_campaign(args, work: Path) -> dict:
    spec = write_spec(work, Path(args.spec))
    store = work / "store"
    pipeline = yaml.safe_load(spec.read_text())["name"]
    with prefect_server("shared") as env:
        code, out = run_train(spec, env)
        if code:
            raise SystemExit(f"the first run failed:\n{out[-3000:]}")
        before = latest_summary(store, pipeline)
        stages = before["stages"]
        kinds = list(DAMAGE)[: 3 if args.quick else len(DAMAGE)]
        per_kind = 1 if args.quick else 2
        targets = {}  # path -> damage, spread over the stages
        for n in range(len(kinds) * per_kind):
            stage = stages[(n * 3) % len(stages)]
            if stage["path"] not in targets:
                targets[stage["path"]] = kinds[n % len(kinds)]
                DAMAGE[targets[stage["path"]]](Path(stage["path"]))
        print(f"corrupt: {pipeline}, damaged {len(targets)} of {len(stages)} stage files:")
        code, out = run_train(spec, env)
        after = latest_summary(store, pipeline) if code == 0 else {}
    recomputed = {s["path"] for s in after.get("stages", []) if not s["cache_hit"]}
    quarantined = {
        path for path in targets if list(Path(path).parent.glob(Path(path).name + ".corrupt-*"))
    }
    for path, kind in targets.items():
        print(
            f"  {Path(path).parent.name}/{Path(path).name[:12]}…: {kind}; "
            f"{'quarantined' if path in quarantined else 'NOT quarantined'}, "
            f"{'recomputed' if path in recomputed else 'NOT recomputed'}"
        )
    _, bad = parquet_pairs(store)
    registry = ModelRegistry(store)
    champion = registry.champion(pipeline)
    model = champion.path / "model.json"
    model.write_text(model.read_text().replace('"', "'", 1))
    try:
        registry.load_model(pipeline)
        refused = ""
    except Exception as exc:  # the message is the finding
        refused = str(exc).splitlines()[0]
    print(f"  registry: damaged model.json of {champion.version}; load: {refused or 'ACCEPTED'}")
    counts = {
        "stage_files": len(stages),
        "damaged": len(targets),
        "quarantined": len(quarantined),
        "recomputed": len(recomputed & set(targets)),
        "recomputed_undamaged": len(recomputed - set(targets)),
        "unmatched_after_rerun": len(bad),
        "same_model": int(after.get("model_version") == before["model_version"]),
        "damaged_model_refused": int(champion.version in refused),
    }
    checks = {
        "the re-run succeeded": code == 0,
        "every damaged artifact was quarantined": counts["quarantined"] == counts["damaged"],
        "every damaged artifact was recomputed": counts["recomputed"] == counts["damaged"],
        "no unmatched Parquet after the re-run": counts["unmatched_after_rerun"] == 0,
        "the model is unchanged": counts["same_model"] == 1,
        "a damaged model.json is refused, naming the version": counts["damaged_model_refused"] == 1,
    }
    return {"counts": counts, "checks": checks, "failures": [] if code == 0 else [out[-3000:]]}


# --------------------------------------------------------------------------- concurrent


def _wait_for(go: Path) -> None:
    while not go.exists():
        time.sleep(0.01)


def registry_writer(store: str, models: str, go: str, name: str, n: int) -> dict:
    """Register ``n`` versions (cycling over the models, f1 from the name), promote each, load
    the champion after each."""
    registry = ModelRegistry(store)
    texts = json.loads(Path(models).read_text())
    loads = failures = 0
    _wait_for(Path(go))
    for i in range(n):
        version = registry.register(
            "campaign", texts[i % len(texts)], spec={"name": "campaign"},
            metrics={"f1": (i * 7919 + len(name) * 104729) % 1000 / 1000},
            validation={"success": True},
            data_fingerprint="d" * 64, spec_hash="s" * 64, run_id=f"{name}-{i}",
        )  # fmt: skip
        registry.promote("campaign", version.version)
        try:
            registry.load_model("campaign")
            loads += 1
        except Exception:  # counted
            failures += 1
    return {"loads": loads, "load_failures": failures}


def champion_reader(store: str, go: str, stop: str) -> dict:
    """Load the champion (checksums verified) until ``stop`` exists."""
    registry = ModelRegistry(store)
    loads = failures = none_yet = 0
    _wait_for(Path(go))
    while not Path(stop).exists():
        try:
            registry.load_model("campaign")
            loads += 1
        except RegistryError as exc:
            if str(exc).startswith("Pipeline 'campaign' has no"):  # no champion yet
                none_yet += 1
            else:
                failures += 1
        except Exception:  # counted
            failures += 1
    return {"loads": loads, "load_failures": failures, "no_champion_yet": none_yet}


def artifact_worker(store: str, go: str, name: str, n: int) -> dict:
    """Write ``n`` rounds of shared keys (same content from every worker) and read them back."""
    import pyarrow as pa

    artifacts = ArtifactStore(store)
    reads = failures = 0
    _wait_for(Path(go))
    for i in range(n):
        key = f"{i % 4:032x}"
        table = pa.table({"x": list(range(1000 * (i % 4 + 1)))})
        artifacts.write("shared", key, table)
        ref = artifacts.lookup("shared", key)
        try:
            ok = ref is not None and artifacts.read(ref).equals(table)
        except Exception:  # counted
            ok = False
        reads += 1
        failures += not ok
    return {"reads": reads, "read_failures": failures}


WORKERS = {"registry": registry_writer, "reader": champion_reader, "artifacts": artifact_worker}


def _spawn(kind: str, *args) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, __file__, "_worker", kind, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _collect(procs: list[subprocess.Popen]) -> list[dict]:
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        if proc.returncode:
            printed = "after" if out.strip() else "before"
            raise SystemExit(
                f"a worker failed (exit code {proc.returncode}, {printed} printing its result):"
                f"\n{err[-3000:]}"
            )
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def concurrent_campaign(args, work: Path) -> dict:
    from libre_lib import LibreClassifier
    from libre_lib.datasets import load_dataset

    writers, per_writer, readers = (3, 5, 2) if args.quick else (8, 25, 4)
    X, y, info = load_dataset("haberman")
    texts = [
        LibreClassifier(positive_class=info.positive_class, n_estimators=5, random_state=seed)
        .fit(X, y)
        .to_json()
        for seed in range(3)
    ]
    models = work / "models.json"
    models.write_text(json.dumps(texts))
    store, go, stop = work / "store", work / "go", work / "stop"
    procs = [_spawn("registry", store, models, go, f"w{i}", per_writer) for i in range(writers)]
    procs += [_spawn("reader", store, go, stop) for _ in range(readers)]
    procs += [_spawn("artifacts", store, go, f"a{i}", per_writer * 2) for i in range(writers)]
    time.sleep(1.0)  # let the interpreters start, then release them together
    go.touch()
    results = _collect(procs[:writers])
    stop.touch()
    results += _collect(procs[writers:])
    registry = ModelRegistry(store)
    versions = registry.versions("campaign")
    verified = 0
    for version in versions:
        with contextlib.suppress(Exception):
            registry.load_model("campaign", version.version)
            verified += 1
    checked, bad = parquet_pairs(store)
    counts = {
        "registrations": writers * per_writer,
        "versions": len(versions),
        "distinct_ids": len({v.version for v in versions}),
        "numbers_contiguous": int(
            [v.number for v in versions] == list(range(1, len(versions) + 1))
        ),
        "versions_verified": verified,
        "run_ids_found": len({v.run_id for v in versions}),
        "champion_loads": sum(r.get("loads", 0) for r in results[: writers + readers]),
        "champion_load_failures": sum(r.get("load_failures", 0) for r in results),
        "reads_before_a_champion": sum(r.get("no_champion_yet", 0) for r in results),
        "artifact_reads": sum(r.get("reads", 0) for r in results),
        "artifact_read_failures": sum(r.get("read_failures", 0) for r in results),
        "artifacts_checked": checked,
        "unmatched_artifacts": len(bad),
        "temp_versions_left": len(leftovers(store)["temp_versions"]),
    }
    champion = champion_state(store, "campaign")
    print(
        f"concurrent: {writers} processes x {per_writer} registrations and promotions, "
        f"{readers} champion readers, {writers} artifact writers; champion {champion}"
    )
    n = counts["registrations"]
    checks = {
        "no version lost or duplicated": counts["versions"] == counts["distinct_ids"] == n
        and counts["run_ids_found"] == n,
        "version numbers 1..n without gaps": counts["numbers_contiguous"] == 1,
        "every version verifies": counts["versions_verified"] == n,
        "no champion load failed": counts["champion_load_failures"] == 0,
        "no artifact read failed": counts["artifact_read_failures"] == 0,
        "every artifact matches its sidecar": counts["unmatched_artifacts"] == 0,
        "the champion is complete": champion.startswith("complete"),
        "no temp version left": counts["temp_versions_left"] == 0,
    }
    failures = []
    if not args.quick:
        same = concurrent_runs(args, work / "runs", failures)
        counts |= same
        checks["identical concurrent runs share one version"] = same["train_versions"] == 1
        checks["every concurrent run succeeded"] = same["train_runs_ok"] == same["train_runs"]
    return {"counts": counts, "checks": checks, "failures": failures}


def concurrent_runs(args, work: Path, failures: list[str]) -> dict:
    """Identical `libre train` runs of one spec on one store at once."""
    work.mkdir()
    spec = write_spec(work, Path(args.spec))
    pipeline = yaml.safe_load(spec.read_text())["name"]
    runs = 3
    with prefect_server("shared") as env:
        procs = [start_train(spec, env, uuid.uuid4().hex) for _ in range(runs)]
        outs = [proc.communicate(timeout=900)[0] for proc in procs]
    ok = sum(proc.returncode == 0 for proc in procs)
    failures += [out[-2000:] for proc, out in zip(procs, outs, strict=True) if proc.returncode]
    store = work / "store"
    _, bad = parquet_pairs(store)
    versions = ModelRegistry(store).versions(pipeline)
    print(f"  {runs} identical training runs at once: {ok} ok, {len(versions)} version(s)")
    return {"train_runs": runs, "train_runs_ok": ok, "train_versions": len(versions),
            "train_unmatched_artifacts": len(bad)}  # fmt: skip


# --------------------------------------------------------------------------- main

CAMPAIGNS = {"kill": kill_campaign, "corrupt": corrupt_campaign, "concurrent": concurrent_campaign}


def report(name: str, result: dict) -> bool:
    counts = ", ".join(f"{k} {v}" for k, v in result["counts"].items())
    print(f"{name} counts: {counts}")
    for check, passed in result["checks"].items():
        print(f"  {'PASS' if passed else 'FAIL'}  {check}")
    for failure in result["failures"]:
        print(failure, file=sys.stderr)
    return all(result["checks"].values()) and not result["failures"]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_worker"]:
        kind, *rest = argv[1:]
        numbers = [int(a) if a.isdigit() else a for a in rest]
        print(json.dumps(WORKERS[kind](*numbers)), flush=True)
        # The work is done and reported: leave without the interpreter's teardown. With eight
        # workers on two cores, one in dozens of runs aborted with "terminate called without
        # an active exception" (a native thread destroyed while still running, which pyarrow's
        # Parquet threads can do at interpreter exit: apache/arrow#34314).
        sys.stderr.flush()
        os._exit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("campaign", choices=[*CAMPAIGNS, "all"])
    parser.add_argument("--quick", action="store_true", help="a small, fast version")
    parser.add_argument("--spec", help="pipeline spec (default: pima; haberman with --quick)")
    parser.add_argument("--kills", type=int, help="kill: how many kills (default 10; 3 quick)")
    parser.add_argument(
        "--server",
        choices=["embedded", "shared"],
        help="kill: each run starts its own Prefect server (default) or all share one (quick)",
    )
    parser.add_argument("--grace", type=float, default=10.0, help="kill: seconds a killed "
                        "run's processes get to end before they count as orphans")  # fmt: skip
    parser.add_argument("--json", type=Path, help="save the counts and checks to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    args.spec = args.spec or str(SPECS / ("haberman.yaml" if args.quick else "pima.yaml"))
    args.kills = args.kills or (3 if args.quick else 10)
    args.server = args.server or ("shared" if args.quick else "embedded")
    names = list(CAMPAIGNS) if args.campaign == "all" else [args.campaign]
    results, passed = {}, True
    for name in names:
        work = Path(tempfile.mkdtemp(prefix=f"libre-campaign-{name}-"))
        started = time.perf_counter()
        try:
            results[name] = CAMPAIGNS[name](args, work)
        finally:
            if not args.keep:
                shutil.rmtree(work, ignore_errors=True)
        results[name]["seconds"] = round(time.perf_counter() - started, 1)
        passed &= report(name, results[name])
        print(f"{name}: {results[name]['seconds']} s", flush=True)
    if args.json:
        command = "python benchmarks/campaigns.py " + " ".join(argv)
        args.json.write_text(json.dumps({"command": command, **results}, indent=2))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
