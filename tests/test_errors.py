"""One error base: every error a user acts on is a ReproError carrying its exit status, and the CLI
reports any of them in one line with that status (no list of classes to keep in step)."""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil

import pytest

import repro
from repro.cli._common import run_handler
from repro.exit_codes import ExitCode, ReproError

# Error classes (by the convention, a name ending in "Error") that never reach a user: each is caught
# where it is raised and turned into a value (an attempt's reason, an infrastructure status) or into a
# ReproError with the user's words. Other exceptions (control flow, a double's refusals) are not errors
# a user meets and are not listed.
INTERNAL = {
    "repro.llm.protocol.ModelCallError": "a failed model call: stored on the attempt, the problem stays unfinished",
    "repro.llm.budget.ContextTooSmallError": "turned into a ModelCallError by each backend",
    "repro.lean.framing.FramingError": "a broken REPL frame: an infrastructure status",
    "repro.lean.text.statement.StatementError": "prover or model text that is not a statement: a rejection reason",
    "repro.lean.syntax.UnknownToolchainError": "no syntax tables: the screen fails closed",
}


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for module_info in pkgutil.walk_packages(repro.__path__, "repro."):
        if module_info.name.startswith("repro.cli.__main__"):
            continue
        try:
            module = importlib.import_module(module_info.name)
        except ImportError:  # an optional extra (vllm, torch) that is not installed here
            continue
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__:
                found[f"{module.__name__}.{name}"] = value
    return found


def test_every_error_class_of_the_package_is_a_repro_error_or_named_internal() -> None:
    classes = _exception_classes()
    assert "repro.release.errors.ReleaseError" in classes and len(classes) > 25
    stray = sorted(
        name
        for name, cls in classes.items()
        if name.endswith("Error") and not issubclass(cls, ReproError) and name not in INTERNAL
    )
    assert stray == [], f"user-facing errors must derive from repro.exit_codes.ReproError: {stray}"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("repro.config.ConfigError", ExitCode.usage),
        ("repro.data.errors.DataError", ExitCode.usage),
        ("repro.release.errors.ReleaseError", ExitCode.usage),
        ("repro.store.schema.StoreError", ExitCode.usage),
        ("repro.app.RunInfrastructureError", ExitCode.unfinished),
        ("repro.app.LeanPreflightError", ExitCode.unfinished),
        ("repro.release.errors.LeanUnavailableError", ExitCode.unfinished),
        ("repro.llm.preflight.EndpointPreflightError", ExitCode.unfinished),
        ("repro.dirlock.DirectoryBusyError", ExitCode.unfinished),
        ("repro.lean.project.SetupError", ExitCode.unfinished),
    ],
)
def test_each_error_carries_the_status_the_exit_table_gives_it(name: str, code: ExitCode) -> None:
    assert _exception_classes()[name].exit_code == code


def _namespace() -> argparse.Namespace:
    return argparse.Namespace(heartbeat=False)


def test_the_cli_reports_a_repro_error_in_one_line_with_its_own_status(capsys: pytest.CaptureFixture[str]) -> None:
    from repro.config import ConfigError

    class LeanDown(ReproError):
        exit_code = ExitCode.unfinished

    def down(_: argparse.Namespace) -> int:
        raise LeanDown("the Lean backend cannot check code; nothing was run")

    def bad(_: argparse.Namespace) -> int:
        raise ConfigError("config run.yaml: problem_in_flight: unknown key")

    def overridden(_: argparse.Namespace) -> int:
        raise ReproError("an endpoint is down", exit_code=ExitCode.unfinished)

    assert run_handler(down, _namespace()) == 3
    assert run_handler(bad, _namespace()) == 2
    assert run_handler(overridden, _namespace()) == 3
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "error: the Lean backend cannot check code; nothing was run",
        "error: config run.yaml: problem_in_flight: unknown key",
        "error: an endpoint is down",
    ]


def test_a_programming_error_is_not_swallowed() -> None:
    def broken(_: argparse.Namespace) -> int:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        run_handler(broken, _namespace())
