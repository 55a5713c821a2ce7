"""`repro provers`: the prover profiles, each with the harness values it fixes."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from repro.cli._common import ExitCode, console

if TYPE_CHECKING:
    from repro.cli._common import Commands


def _plain(value: object) -> str:
    """A setting as a reader writes it in YAML (n2): no Python reprs, no None or False."""
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value if value.strip() and "\n" not in value else json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def command_provers(arguments: argparse.Namespace) -> int:
    from rich.table import Table

    from repro.provers import get_profile, list_profiles

    profiles = [get_profile(arguments.name)] if arguments.name else list_profiles()
    if arguments.json:
        print(json.dumps([profile.model_dump(mode="json") for profile in profiles], indent=2))
        return ExitCode.ok
    if arguments.name:
        profile = profiles[0]
        console.print(f"{profile.name}: {profile.title}", markup=False)
        for key, value in profile.model_dump(mode="json", exclude={"name", "title", "sources"}).items():
            console.print(f"  {key}: {_plain(value)}", markup=False)
        console.print("  sources:")
        for source in profile.sources:
            console.print(f"    {source}", markup=False)
        example = "theorem example_statement (x : ℕ) (h : x = 2) : x + x = 4 := by sorry"
        console.print("\nwhat it sends for an example statement:", markup=False)
        if profile.prompt_format == "completion":
            text = profile.user_text(example, profile.lean_header)
            console.print(f"--- raw prompt (no chat template) ---\n{text}", markup=False)
        else:
            for message in profile.messages(example, profile.lean_header):
                console.print(f"--- {message.role} ---\n{message.content}", markup=False)
        return ExitCode.ok
    table = Table(title="prover profiles (models.prove.profile, --prover NAME=PROFILE@URL)")
    for column in ("profile", "model", "toolchain", "prompt", "statement", "T", "top_p", "max_tokens", "context"):
        table.add_column(column)
    for profile in profiles:
        table.add_row(
            profile.name,
            profile.model or "(set model)",
            profile.toolchain,
            f"{profile.prompt_format}{' +system' if profile.system_prompt else ''}",
            ":= by sorry" if profile.statement_form == "by_sorry" else ":= by",
            f"{profile.temperature:g}",
            f"{profile.top_p:g}",
            str(profile.max_tokens),
            str(profile.max_model_len or "-"),
        )
    console.print(table)
    console.print("details and the harness files each value comes from: repro provers NAME")
    return ExitCode.ok


def register(commands: Commands) -> None:
    provers = commands.add_parser(
        "provers",
        help="list the prover profiles (prompt, statement form, sampling, Lean budget per harness)",
        description="Each profile asks, samples and checks a prover the way its own harness does. Choose one"
        " with models.prove.profile in a config or --prover NAME=PROFILE@URL in prove-study; values the config"
        " sets explicitly override the profile's.",
    )
    provers.add_argument("name", nargs="?", help="one profile: every value, its sources and an example prompt")
    provers.add_argument("--json", action="store_true", help="the profiles as JSON")
    provers.set_defaults(handler=command_provers)
