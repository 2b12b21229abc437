"""Ctrl-C after a command's work is recorded: a console command ignores it (Prefect's shutdown
turned exit 0 into a traceback); code that runs the CLI in its own process keeps its handler."""

import signal

from libre_flows.flows.cli import common


def test_only_a_console_command_ignores_ctrl_c_once_its_work_is_committed(monkeypatch):
    before = signal.getsignal(signal.SIGINT)
    try:
        monkeypatch.setattr(common, "_console_command", False)
        common.work_committed()
        assert signal.getsignal(signal.SIGINT) is before  # e.g. a test runner invoking the CLI
        common.as_console_command()
        common.work_committed()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)
