"""Console helpers shared by the `libre` commands: one-line errors, a live status line, and
Prefect's console kept quiet unless --debug."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Annotated, ClassVar

import typer
from rich.console import Console
from rich.markup import escape

# off a terminal (a log file, cron) long lines stay whole, so a log can be searched: wrapped at
# the default 80 columns, an event id or a drift message broke mid-phrase
console = Console(soft_wrap=not sys.stdout.isatty())
errors = Console(stderr=True, soft_wrap=True)


@contextlib.contextmanager
def console_to_stderr():
    """The commands' own lines (progress, summary, notes) on stderr for a while: stdout is
    kept for a machine-readable result (``libre train --json``)."""
    before = console._file  # None: the stream sys.stdout is at each print (not as it is now)
    console.file = sys.stderr
    try:
        yield
    finally:
        console._file = before


SpecArg = Annotated[Path, typer.Argument(help="Pipeline spec (YAML).", show_default=False)]
Debug = Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")]


class ConsoleFilter(logging.Filter):
    """Keep Prefect's console to warnings and errors, without tracebacks (the CLI prints its
    own progress and one clear error line; --debug shows everything)."""

    RUN_LOGGERS = (
        "prefect.task_runs",
        "prefect.flow_runs",
        "prefect.task_engine",
        "prefect.flow_engine",
    )

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith(self.RUN_LOGGERS):
            return False  # run outcomes: the CLI reports them itself, in one line
        record.exc_info = None
        record.exc_text = None
        return record.levelno >= logging.WARNING


class ShutdownFilter(logging.Filter):
    """Drop Prefect's own chatter as a command ends (the temporary server's "Stopping
    temporary server" line, the events worker's "Still processing items" while it flushes):
    neither is about the user's run. Stays installed until the process exits (that is when
    Prefect says them); --debug keeps them."""

    NOISE = (
        ("prefect", "Stopping temporary server"),
        ("EventsWorker", "Still processing items"),
    )

    def filter(self, record: logging.LogRecord) -> bool:
        return not any(
            record.name == name and record.getMessage().startswith(start)
            for name, start in self.NOISE
        )


SHUTDOWN_FILTER = ShutdownFilter()


class StageProgress(logging.Handler):
    """Turns the stage log lines of the pipeline's tasks into a live status line."""

    #: The mapped tasks' stages, counted as they finish; the streamed passes' per part.
    MAPPED: ClassVar[dict[str, str]] = {
        "tune": "tuning tasks finished",
        "learn": "weak learners finished",
        "profile": "pass 1, parts profiled",
        "sample_part": "pass 2, parts sampled",
        "resolve": "pass 2b, parts resolved",
        "encode_part": "pass 3, parts encoded",
    }
    PER_PART = ("profile", "sample_part", "resolve", "encode_part")
    #: Mapped tasks named otherwise than the stage they count ("stage sample cache hit 0 of
    #: 25 tasks" is pass 2's), and the second stage a pass-2 task writes (not a stage change).
    TASK_STAGES: ClassVar[dict[str, str]] = {"sample": "sample_part"}
    SILENT = ("fine_counts",)

    def __init__(self, status) -> None:
        super().__init__(level=logging.INFO)
        self.status = status
        self.counts = dict.fromkeys(self.MAPPED, 0)
        self.totals: dict[str, int] = {}  # a mapped stage's tasks, said as it is submitted
        self.parts: int | None = None

    def emit(self, record: logging.LogRecord) -> None:
        words = record.getMessage().split()
        if words[:2] == ["streamed", "source:"] and len(words) > 2 and words[2].isdigit():
            self.parts = int(words[2])  # "streamed source: 20 part(s), ..."
            self.status.update(escape(" ".join(words)))
        elif words[:1] == ["waiting:"]:  # mapped tasks of which none finished for a while
            self.status.update(escape(" ".join(words)))
        elif len(words) >= 3 and words[0] == "stage" and words[1] not in self.SILENT:
            stage, hit = self.TASK_STAGES.get(words[1], words[1]), words[2:4] == ["cache", "hit"]
            if stage in self.counts:  # mapped tasks: count them
                # "stage learn cache hit 3 of 50 tasks": the cached ones and the total
                if hit and len(words) >= 7 and words[5] == "of" and words[4].isdigit():
                    self.counts[stage], self.totals[stage] = int(words[4]), int(words[6])
                elif words[2] == "finished" and len(words) >= 6 and words[3].isdigit():
                    # the flow's count ("stage learn finished 7 of 50 tasks"): the tasks' own
                    # lines may be ahead of it, or (on Dask workers) never reach this process
                    self.counts[stage] = max(self.counts[stage], int(words[3]))
                else:
                    self.counts[stage] += 1
                done = f"{self.counts[stage]}"
                total = self.parts if stage in self.PER_PART else self.totals.get(stage)
                if total:
                    done += f" of {total}"
                self.status.update(f"{self.MAPPED[stage]}: {done}")
            elif words[2] != "finished":  # the result, not the file's path (it wrapped the line)
                said = words[2] if hit or words[2] == "computed" else " ".join(words[2:])
                said = re.sub(r"\s*\(\d+(\.\d+)? s\)$", "", said)  # the line has its own time
                self.status.update(escape(f"{stage}: {'cache hit' if hit else said}"))


#: Off a terminal, a mapped stage's progress is printed at most this often (its first and last
#: task always).
PLAIN_EVERY_S = 10.0


class PlainStatus:
    """The status line off a terminal (a log file, CI, cron), where a live line shows nothing
    until the run ends: a line with the elapsed time when the stage changes, and for a mapped
    stage's count at most every :data:`PLAIN_EVERY_S` seconds and when it is complete."""

    def __init__(self, message: str, every: float = PLAIN_EVERY_S, clock=time.monotonic):
        self.clock, self.every = clock, every
        self.started = clock()
        self.last_key: str | None = None
        self.last_text: str | None = None
        self.last_at = -float("inf")
        console.print(f"{message} ...", highlight=False)

    def update(self, text: str) -> None:
        key, _, rest = text.partition(":")
        words = rest.split()
        complete = len(words) == 3 and words[1] == "of" and words[0] == words[2]
        now = self.clock()
        if text == self.last_text or (
            key == self.last_key and now - self.last_at < self.every and not complete
        ):  # a count said again (the flow's, after its tasks'): once
            return
        self.last_key, self.last_text, self.last_at = key, text, now
        console.print(f"[{now - self.started:7.1f} s] {text}", highlight=False)


@contextlib.contextmanager
def _status(message: str):
    """A live status line on a terminal, else :class:`PlainStatus` lines (also on a terminal
    that cannot redraw a line, ``TERM=dumb``: rich shows no live line there)."""
    if console.is_terminal and not getattr(console, "is_dumb_terminal", False):
        with console.status(message) as status:
            yield status
    else:
        yield PlainStatus(message)


@contextlib.contextmanager
def pipeline_console(debug: bool, message: str):
    """A status line during the run; Prefect's console quiet unless --debug. The library's
    warnings are not printed raw either (a stage run in the flow's thread printed them with
    Prefect's source line): those about the data are the run's notes, which `train` prints."""
    from prefect.logging import configuration

    from libre_lib.errors import LibreWarning

    if not configuration.PROCESS_LOGGING_CONFIG:
        configuration.setup_logging()  # Prefect would do it at the first run; we filter it
    handlers = [
        h
        for name in ("", "prefect")
        for h in logging.getLogger(name).handlers
        if isinstance(h, logging.StreamHandler)
    ]
    quiet = ConsoleFilter()
    if not debug:
        for handler in handlers:
            handler.addFilter(quiet)
            if SHUTDOWN_FILTER not in handler.filters:
                handler.addFilter(SHUTDOWN_FILTER)
        # bad data or a bad spec: the server's log of the run (its UI) gets the one-line
        # reason this command prints, not the traceback
        from libre_flows.flows.train import EXPECTED_FAILURE, EXPECTED_FAILURE_LOGGERS

        for name in EXPECTED_FAILURE_LOGGERS:
            if EXPECTED_FAILURE not in logging.getLogger(name).filters:
                logging.getLogger(name).addFilter(EXPECTED_FAILURE)
    with (
        _status(message) as status,
        warnings.catch_warnings(),
        _quiet_workers(not debug),
    ):
        if not debug:
            warnings.filterwarnings("ignore", category=LibreWarning)
        progress = StageProgress(status)
        # the tasks' stage lines, and the flow's (a mapped stage's total is said by the flow)
        loggers = [logging.getLogger(f"prefect.{runs}") for runs in ("task_runs", "flow_runs")]
        for logger in loggers:
            logger.addHandler(progress)
        try:
            yield
        finally:
            for logger in loggers:
                logger.removeHandler(progress)
            for handler in handlers:
                handler.removeFilter(quiet)


#: Prefect's setting of its console handler's level (``PREFECT_LOGGING_[PATH]_[KEY]``).
WORKER_CONSOLE_LEVEL = "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL"


@contextlib.contextmanager
def _quiet_workers(quiet: bool):
    """Processes started meanwhile (a Dask cluster's workers) print warnings only to the
    command's console, as this process does; their logs still reach the server. A level the
    user set is kept."""
    if not quiet or WORKER_CONSOLE_LEVEL in os.environ:
        yield
        return
    os.environ[WORKER_CONSOLE_LEVEL] = "WARNING"
    try:
        yield
    finally:
        os.environ.pop(WORKER_CONSOLE_LEVEL, None)


def server_note() -> str:
    """Use the local server if one runs (``libre_flows.flows.local_server.connect``) and say
    which Prefect server the run will use."""
    from libre_flows.flows import local_server

    starting = local_server.mode() == "auto" and local_server.running() is None
    if starting:
        console.print("starting the local Prefect server (LIBRE_SERVER=auto)")
    local = local_server.connect()
    if local and starting:  # kept as `libre server start` keeps it: killed runs marked Crashed
        ensure_crash_detection(local)
    if local:
        _settle_task_runs(local)
        return f"local Prefect server {local.removesuffix('/api')}"
    from prefect.settings import get_current_settings

    configured = get_current_settings().api.url
    if configured:
        return f"Prefect server {configured}"
    settings = get_current_settings()
    database = settings.server.database.connection_url
    url = database.get_secret_value() if hasattr(database, "get_secret_value") else database
    if not url or str(url).startswith("sqlite"):  # the server's database file: under home
        check_prefect_home(Path(settings.home).expanduser())
    return "starting a temporary Prefect server; `libre server start` keeps one running"


def _settle_task_runs(api_url: str) -> None:
    """The task runs the crash detection left Running in flow runs it marked Crashed, marked
    Crashed too (``libre_flows.flows.crash_detection.settle_task_runs``); a failure only
    leaves them as they were."""
    from libre_flows.flows import crash_detection

    with contextlib.suppress(Exception):
        crash_detection.settle_task_runs(api_url)


def check_prefect_home(home: Path) -> None:
    """Refuse at once a PREFECT_HOME that cannot be written: Prefect's temporary server keeps
    its database there, and on a read-only folder the command waited some two minutes, then
    failed with "Timed out while attempting to connect to ephemeral Prefect API server"."""
    import tempfile

    try:
        home.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=home, prefix=".libre-write-check-"):
            pass
    except OSError as exc:
        raise PermissionError(
            f"PREFECT_HOME {str(home)!r} cannot be written ({exc.strerror or exc}): Prefect's "
            "temporary server keeps its database there. Set PREFECT_HOME to a writable "
            "folder, or PREFECT_API_URL to a running server."
        ) from None


def shown(text) -> str:
    """Text from the data or a spec for a console line: its invisible characters written out
    (:func:`~libre_lib.ops.markdown.visible`) and its rich markup escaped (a class named
    ``[/bad]`` crashed `libre init` after it had written the spec)."""
    from libre_lib.ops.markdown import visible

    return escape(visible(text))


#: The exit code of a command whose data were refused: a training run's data failed their
#: validation, or scoring data broke the model's data contract (or drifted, with
#: --fail-on-drift). A scheduled job tells them from a failure of its own (exit 1): the data
#: need someone's attention, a re-run on the same data fails again.
DATA_REFUSED = 3


def exit_code(exc: BaseException) -> int:
    """:data:`DATA_REFUSED` for refused data, else 1."""
    from libre_lib.errors import DataValidationError
    from libre_lib.ops.contract import ContractViolation

    return DATA_REFUSED if isinstance(exc, DataValidationError | ContractViolation) else 1


def fail(exc: BaseException, debug: bool) -> None:
    """One clear message (multi-line for validation failures), no traceback unless --debug;
    exit code :func:`exit_code`."""
    if debug:
        raise exc
    from libre_lib.errors import LibreError
    from libre_lib.ops.markdown import visible

    message = visible(str(exc).strip()).splitlines() or [type(exc).__name__]
    if not isinstance(exc, LibreError | OSError):  # the hint after the whole message
        name = type(exc).__name__
        message[0] = name if message[0] == name else f"{name}: {message[0]}"
        message[-1] = f"{message[-1]} (run with --debug for the traceback)"
    errors.print(f"[bold red]error:[/] {escape(message[0])}", highlight=False)
    for line in message[1:]:
        errors.print(f"  {line}", highlight=False, markup=False)
    raise typer.Exit(code=exit_code(exc))


def interrupted(what: str) -> None:
    """Ctrl-C during a command: say what state it leaves (``what``), exit 130 as a shell
    expects of an interrupted command, without a traceback; after SIGTERM (a service
    manager's or a cron timeout's stop) the same, exiting 143."""
    if _terminated_by is not None:
        name = signal.Signals(_terminated_by).name
        errors.print(f"[bold yellow]stopped by {name}:[/] {escape(what)}", highlight=False)
        raise typer.Exit(code=128 + _terminated_by)
    errors.print(f"[bold yellow]interrupted:[/] {escape(what)}", highlight=False)
    raise typer.Exit(code=130)


def run_console(app_call) -> None:
    """Run a console command (``app_call()``), and end a Ctrl-C or SIGTERM that comes where
    no command catches it (while it starts) with one line and its exit code, not a traceback."""
    try:
        app_call()
    except KeyboardInterrupt:
        with contextlib.suppress(typer.Exit):
            interrupted("the command stopped before its end.")
        sys.exit(128 + (_terminated_by or signal.SIGINT))
    except SystemExit as exc:  # typer ends a command that does not catch it with 130, silently
        if _terminated_by is not None and exc.code == 130:
            with contextlib.suppress(typer.Exit):
                interrupted("the command stopped before its end.")
            sys.exit(128 + _terminated_by)
        raise


#: The signal that stopped the command as a Ctrl-C would (SIGTERM), if one did.
_terminated_by: int | None = None


def _let_pass(signum, frame) -> None:
    """SIGTERM once a command's work is recorded: nothing left to stop."""


def _on_terminate(signum, frame) -> None:
    """SIGTERM in a console command: stop as Ctrl-C stops it (what it finished kept, one line
    saying so). It used to end the process on the spot, printing nothing (exit 143)."""
    global _terminated_by
    _terminated_by = signum
    raise KeyboardInterrupt


DEFAULT_STORE = Path(".libre-store")
"""The store the commands that take a pipeline name look in without --store or a spec."""


def pipeline_and_store(given: str, store: Path | None) -> tuple[str, Path]:
    """The pipeline ``given`` names and the store holding it: a spec file (``specs/pima.yaml``)
    stands for its pipeline and, unless ``store`` (--store) is given, the spec's own store, as
    `libre train` used it; a name looks in ``store`` or :data:`DEFAULT_STORE`."""
    pipeline = given
    from libre_lib.ops.spec import DATA_NAMES

    named = Path(given).name.lower()
    # a spec, even one that is not there; a data file: load_spec says to write its spec
    if Path(given).suffix.lower() in (".yaml", ".yml") or named.endswith(DATA_NAMES):
        from libre_lib.ops.spec import load_spec

        spec = load_spec(given)
        pipeline = spec.name
        store = store if store is not None else Path(spec.store_location())
    store = store if store is not None else DEFAULT_STORE
    if store.exists() and not store.is_dir():
        raise NotADirectoryError(f"The store {store} is a file, not a folder.")
    return pipeline, store


def known_pipelines(name: str, known: list[str], where: str) -> str:
    """The sentence that lists the pipelines ``where`` holds, the closest to ``name`` first
    (``credit_approval`` for ``credit-approval``), or says it holds none and names --store."""
    import difflib

    if not known:
        return f" No pipeline has any under {where} (another folder: --store)."
    close = difflib.get_close_matches(name.lower().replace("_", "-"), known, n=1, cutoff=0.6)
    guess = f" Did you mean {close[0]!r}?" if close else ""
    return f"{guess} Pipelines under {where}: {', '.join(known)}."


def user_errors() -> tuple[type[BaseException], ...]:
    return (Exception,)


def ensure_crash_detection(api_url: str | None = None) -> None:
    """Make sure the server marks the runs of killed commands Crashed
    (``libre_flows.flows.crash_detection.ensure``): on the server at ``api_url``, else on the
    one this command uses; nothing for Prefect's temporary server, which stops with the command.
    A failure is one warning line, never an error."""
    from libre_flows.flows import crash_detection

    if api_url is None:
        from prefect.settings import get_current_settings

        from libre_flows.flows import local_server

        api_url = local_server.connect() or get_current_settings().api.url
        if not api_url:
            return
    frequency = crash_detection.heartbeat_frequency()
    if frequency is None:  # heartbeats off: nothing would ever be marked
        return
    within = crash_detection.silence_limit(frequency)
    try:
        status = crash_detection.ensure(within, api_url=api_url)
    except Exception as exc:
        reason = (str(exc).strip().splitlines() or [""])[0]
        errors.print(
            f"[bold yellow]warning:[/] could not create the automation {crash_detection.NAME!r} "
            f"on {api_url} ({type(exc).__name__}: {escape(reason)}), so the runs of killed "
            "commands stay Running: check that the server answers, then start this command again.",
            highlight=False,
        )
        return
    if status in ("created", "updated"):
        console.print(
            f"crash detection {status}: a libre flow run silent for "
            f"{within.total_seconds():.0f} s after a heartbeat is marked Crashed",
            soft_wrap=True,
        )
    elif status == "paused":
        console.print(
            f"crash detection paused (automation {crash_detection.NAME!r}): the runs of killed "
            "commands stay Running",
            soft_wrap=True,
        )


_console_command = False


def as_console_command() -> None:
    """Mark this process as a ``libre`` command run from a shell (the console entry point or
    the warm runner's child), not a caller running the CLI in its own process."""
    global _console_command
    _console_command = True
    warnings.showwarning = _show_warning
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_terminate)


_default_show = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """The library's warnings as a command prints its own ("warning: ..."), not as Python
    does (a file path of the library, a line of its source); others as Python does."""
    from libre_lib.errors import LibreWarning

    if not issubclass(category, LibreWarning):
        _default_show(message, category, filename, lineno, file, line)
        return
    stream = file if file is not None else sys.stderr
    try:
        stream.write(f"warning: {message}\n")
    except OSError:  # a closed stream, as Python's own showwarning allows
        pass


@contextlib.contextmanager
def interrupts_noticed():
    """Note every Ctrl-C while the block runs (the list it yields), then act on it as before.
    A KeyboardInterrupt raised while Python runs a finalizer (an asyncio transport's
    ``__del__`` during a flow run) is printed as "Exception ignored" and lost: the run went
    on to the end and the command said nothing of the Ctrl-C."""
    seen: list[int] = []
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield seen
        return

    def note(signum, frame):
        seen.append(signum)
        previous(signum, frame)

    signal.signal(signal.SIGINT, note)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous)


def work_committed() -> None:
    """The command's work is done and recorded (a model promoted, a scoring output renamed
    into place). Ctrl-C from now on, while Prefect stops its server and drains its events,
    could not undo it and only turned exit 0 into a traceback: a console command ignores it."""
    if _console_command and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, _let_pass)  # not SIG_IGN, which its children would keep
