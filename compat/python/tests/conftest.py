"""Pytest plumbing for the Python compatibility scenario.

Runs every ``async def`` test on one shared asyncio loop (the SDK's clients
are reused across steps) under a per-step time limit, prints one PASS/FAIL
line per step, and writes the totals to $COMPAT_PY_RESULT for run.sh.
No pytest-asyncio: the loop handling is the few lines below.
"""

from __future__ import annotations

import asyncio
import inspect
import os

import pytest

from scenario import World

STEP_TIMEOUT_S = float(os.environ.get("COMPAT_PY_STEP_TIMEOUT", "60"))

_LOOP = pytest.StashKey[asyncio.AbstractEventLoop]()


class Tally:
    """Counts steps and prints a PASS/FAIL line for each."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.passed = 0
        self.failed = 0

    def line(self, text: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(text)
        else:
            print(text, flush=True)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        step = getattr(report, "step", report.nodeid)
        if report.when == "call":
            if report.passed:
                self.passed += 1
                self.line(f"PASS {step}")
            elif report.failed:
                self.failed += 1
                self.line(f"FAIL {step}: {_reason(report)}")
            else:
                self.line(f"SKIP {step}")
        elif report.failed:
            self.failed += 1
            self.line(f"FAIL {step} ({report.when}): {_reason(report)}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config):
        # Keep pytest's counting categories but drop its progress letters:
        # the PASS/FAIL lines above replace them.
        if report.when == "call" or report.skipped:
            return report.outcome, "", report.outcome.upper()
        if report.failed:
            return "error", "", "ERROR"
        return None

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if exitstatus not in (0, 1) and self.failed == 0:
            self.failed = 1  # collection error, interruption, no tests
        path = os.environ.get("COMPAT_PY_RESULT")
        if path:
            with open(path, "w", encoding="utf-8") as out:
                out.write(f"{self.passed} {self.failed}\n")


def _reason(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message.splitlines()[0][:300]
    return str(report.longrepr).strip().splitlines()[-1][:300]


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_LOOP] = asyncio.new_event_loop()
    config.pluginmanager.register(Tally(config), "compat-tally")


def pytest_unconfigure(config: pytest.Config) -> None:
    loop = config.stash.get(_LOOP, None)
    if loop is not None and not loop.is_closed():
        loop.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    doc = inspect.getdoc(getattr(item, "obj", None)) or ""
    title = doc.splitlines()[0].rstrip(".") if doc else item.name
    report.step = f"{item.module.__name__.removeprefix('test_')}: {title}"
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    func = pyfuncitem.obj
    if not inspect.iscoroutinefunction(func):
        return None
    args = {k: pyfuncitem.funcargs[k] for k in pyfuncitem._fixtureinfo.argnames}
    loop = pyfuncitem.config.stash[_LOOP]
    start = loop.time()
    try:
        loop.run_until_complete(asyncio.wait_for(func(**args), STEP_TIMEOUT_S))
    except TimeoutError as err:
        if loop.time() - start < STEP_TIMEOUT_S:
            raise  # a shorter wait inside the step ran out
        raise AssertionError(f"step did not finish in {STEP_TIMEOUT_S:.0f} s (hang)") from err
    return True


@pytest.fixture(scope="session")
def world() -> World:
    """The servers, names and shared clients of the scenario."""
    return World.from_env()
