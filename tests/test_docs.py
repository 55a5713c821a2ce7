"""The README and docs/ say what the code does: generated references current, links and anchors that
resolve, a Layout that matches the tree, set-up commands CI runs byte for byte, and command lines the
CLI accepts."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from repro import docs as generator
from repro.cli import DESCRIPTION, build_parser
from repro.config import RunConfig
from repro.records import ReleasedInstance
from tests.docs_pages import (
    DOCS,
    MARKERS,
    PAGES,
    README,
    REPO,
    anchors,
    blocks,
    command_lines,
    repro_commands,
    shell_lines,
    without_blocks,
)

INSTALL_AND_RUN = "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && repro run"
INSTALL_AND_TEST = 'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[dev]" && pytest'


def _section(text: str, heading: str) -> str:
    """The body of a ``## heading`` section, up to the next heading of level 2."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert match, f"README has no '## {heading}' section"
    return match.group(1)


# --- generated references ---------------------------------------------------------------------------------


def test_generated_references_are_current() -> None:
    stale = [path.name for path in generator.stale_files(DOCS)]
    assert not stale, f"{stale} are stale: run `python -m repro.docs` from the repository root and commit them"


def test_check_mode_names_a_stale_file_and_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert generator.main(["--docs-dir", str(tmp_path)]) == 0
    assert generator.main(["--check", "--docs-dir", str(tmp_path)]) == 0
    (tmp_path / "dataset.md").write_text("an edit by hand\n", encoding="utf-8")
    capsys.readouterr()
    assert generator.main(["--check", "--docs-dir", str(tmp_path)]) == 1
    stderr = capsys.readouterr().err
    assert "dataset.md is stale" in stderr and "python -m repro.docs" in stderr
    assert "configuration.md" not in stderr
    assert (tmp_path / "dataset.md").read_text(encoding="utf-8") == "an edit by hand\n"  # --check writes nothing


def test_the_command_line_reference_does_not_depend_on_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    wide = generator.cli_markdown()
    monkeypatch.setenv("COLUMNS", "40")
    assert generator.cli_markdown() == wide
    assert "## `repro lean setup`" in wide and "| `--build-mathlib` |" in wide


class _Documented(BaseModel):
    # a comment above the field
    above: int = Field(3, ge=1, le=9)
    inline: str | None = None  # a comment at the end of its line
    described: bool = Field(True, description="from  the\n description")
    # a comment the description wins over
    both: float = Field(0.5, description="the description")
    documented_below: list[str] = Field(default_factory=list)
    """A docstring under the field."""
    bare: str


def test_field_descriptions_come_from_comments_docstrings_and_descriptions() -> None:
    assert generator.field_description(_Documented, "above") == "a comment above the field"
    assert generator.field_description(_Documented, "inline") == "a comment at the end of its line"
    assert generator.field_description(_Documented, "described") == "from the description"
    assert generator.field_description(_Documented, "both") == "the description"
    assert generator.field_description(_Documented, "documented_below") == "A docstring under the field."
    assert generator.field_description(_Documented, "bare") == ""
    table = generator.settings_table(generator.Section("x", _Documented), {})
    assert "| `x.above` | int (>= 1, <= 9) | `3` | a comment above the field |" in table
    assert "| `x.inline` | string \\| null | `null` |" in table
    assert "| `x.bare` | string | *required* |" in table


def _leaf_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    keys = []
    for name, info in model.model_fields.items():
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys += _leaf_keys(annotation, f"{prefix}{name}.")
        elif getattr(annotation, "__origin__", None) is dict and issubclass(annotation.__args__[1], BaseModel):
            keys += _leaf_keys(annotation.__args__[1], f"{prefix}{name}.<name>.")
        else:
            keys.append(prefix + name)
    return keys


def test_every_run_config_key_and_release_column_is_documented() -> None:
    configuration = (DOCS / "configuration.md").read_text(encoding="utf-8")
    missing = [key for key in _leaf_keys(RunConfig) if f"| `{key}` |" not in configuration]
    assert not missing, f"docs/configuration.md lacks {missing}"
    dataset = (DOCS / "dataset.md").read_text(encoding="utf-8")
    columns = [key.replace(".models.", ".models[].") for key in _leaf_keys(ReleasedInstance)]
    missing = [column for column in columns if f"| `{column}` |" not in dataset]
    assert not missing, f"docs/dataset.md lacks {missing}"
    undescribed = [line for line in dataset.splitlines() if line.startswith("| `") and line.endswith("|  |")]
    assert not undescribed, f"release columns without a meaning (comment them in repro/records.py): {undescribed}"


# --- the README --------------------------------------------------------------------------------------------


def test_readme_is_short_and_keeps_the_two_set_up_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    setup = [block.body.strip() for block in blocks(README) if block.marker == "setup"]
    assert setup == [INSTALL_AND_RUN, INSTALL_AND_TEST]
    assert all(command in _section(text, "Set up") for command in setup)
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert INSTALL_AND_TEST in ci.splitlines(), ".ci/run must install and test exactly as the README says"


def _layout_paths() -> list[str]:
    block = re.search(r"```\n(.*?)```", _section(README.read_text(encoding="utf-8"), "Layout"), flags=re.S)
    assert block, "the Layout section holds one plain code block"
    paths, parent = [], ""
    for line in block.group(1).splitlines():
        indent = len(line) - len(line.lstrip())
        first = line.split()[0] if line.strip() else ""
        if not first or indent >= 6:
            continue  # a description's continuation line
        if indent == 0:
            parent = first if first.endswith("/") else ""
            paths.append(first)
        else:
            paths.append(parent + first)
    return paths


def test_layout_names_only_what_exists_and_every_folder_that_does() -> None:
    named = _layout_paths()
    missing = [path for path in named if not (REPO / path.rstrip("/")).exists()]
    assert not missing, f"README Layout names {missing}, which do not exist"
    folders = {f"{path.name}/" for path in REPO.iterdir() if path.is_dir() and not path.name.startswith(".")}
    folders -= {"runs/", "release/", "studies/", "evals/", "build/", "dist/"}  # a user's own outputs
    folders |= {f"repro/{path.name}/" for path in (REPO / "repro").iterdir() if (path / "__init__.py").is_file()}
    folders.add(".ci/")
    unnamed = sorted(folder for folder in folders if folder not in named and not folder.endswith(".egg-info/"))
    assert not unnamed, f"README Layout does not name {unnamed}"


# --- links -------------------------------------------------------------------------------------------------


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.is_file() else ""


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(REPO)))
def test_links_resolve(page: Path) -> None:
    text = without_blocks(page)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # a URL
        file_part, _, anchor = target.partition("#")
        linked = (page.parent / file_part).resolve() if file_part else page
        missing_anchor = bool(anchor) and linked.suffix == ".md" and anchor not in anchors(_read(linked))
        if not linked.exists() or missing_anchor:
            broken.append(target)
    assert not broken, f"{page.name}: broken links {broken}"


# --- command lines the CLI accepts -------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _check(command: str, root: argparse.ArgumentParser) -> str | None:
    """Why the CLI would not accept this command's command and options, or None."""
    words = shlex.split(command.replace("[", " ").replace("]", " ").replace("\\|", "|"))[1:]
    parser, path = root, ["repro"]
    while words and words[0] in _subcommands(parser):
        path.append(words[0])
        parser = _subcommands(parser)[words.pop(0)]
    if _subcommands(parser) and not {"-h", "--help", "--version"} & set(words):
        return f"`{command}`: {' '.join(path)} needs one of {sorted(_subcommands(parser))}"
    known = set(parser._option_string_actions)
    unknown = [word.split("=")[0] for word in words if word.startswith("-") and word.split("=")[0] not in known]
    unknown = [word for word in unknown if not re.fullmatch(r"-\d+", word)]
    return f"`{command}`: {' '.join(path)} has no option {unknown}" if unknown else None


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(REPO)))
def test_documented_command_lines_are_accepted_by_the_cli(page: Path) -> None:
    parser = build_parser()
    problems = [problem for command in command_lines(page) if (problem := _check(command, parser)) is not None]
    assert not problems, "\n".join(problems)


def test_the_command_check_catches_a_misspelled_option_and_command() -> None:
    parser = build_parser()
    assert _check("repro status runs/demo --json", parser) is None
    assert "has no option ['--jsn']" in (_check("repro status runs/demo --jsn", parser) or "")
    assert "needs one of" in (_check("repro lean", parser) or "")
    assert _check("repro lean selftest [--backend repl|kimina|fake]", parser) is None
    assert repro_commands("CUDA_VISIBLE_DEVICES=0 repro run --set prove.k=8 && repro status runs/x # note") == [
        "repro run --set prove.k=8",
        "repro status runs/x",
    ]


def test_the_help_examples_are_accepted_and_appear_in_the_readme() -> None:
    parser = build_parser()
    examples = [line.split("#")[0].strip() for line in DESCRIPTION.splitlines() if line.startswith("  repro ")]
    assert examples
    problems = [problem for command in examples if (problem := _check(command, parser)) is not None]
    assert not problems, "\n".join(problems)
    readme = " ".join(command_lines(README))
    absent = [command for command in examples if command.split(" --")[0] not in readme]
    assert not absent, f"`repro --help` shows {absent}, which the README does not"


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(REPO)))
def test_every_command_block_is_run_by_the_tour_or_marked_as_needing_a_gpu_lean_or_an_api(page: Path) -> None:
    """A block of commands either runs offline (tests/test_tour.py runs it) or says what it needs."""
    unmarked = [
        f"{block.where} ({block.language or 'no language'})"
        for block in blocks(page)
        if block.language in ("bash", "sh", "shell", "python") and block.marker not in MARKERS
    ]
    assert not unmarked, (
        f"blocks without a marker (one of {', '.join(f'<!-- {m} -->' for m in MARKERS)} on the line above): {unmarked}"
    )


_REPO_PATH = re.compile(r"`((?:repro|tests|benchmarks|prompts|configs|docs|data|docker|lean_project|\.ci)/[^`\s]*)`")
_PYTHON_TARGET = re.compile(r"python3? (?:-m )?([\w./]+)")
RELEASE_RELATIVE = ("data/test.",)  # a release's own files, named relative to the release directory


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(REPO)))
def test_named_files_scripts_and_modules_exist(page: Path) -> None:
    """A guide that points at `repro/lean/x.py` or `python -m benchmarks.y` points at something that is there."""
    text = page.read_text(encoding="utf-8")
    missing = []
    for named in _REPO_PATH.findall(text):
        path = named.split(":")[0].rstrip(".,")
        if any(mark in path for mark in "<*{[") or path.startswith(RELEASE_RELATIVE):
            continue
        if not (REPO / path.rstrip("/")).exists():
            missing.append(path)
    for target in _PYTHON_TARGET.findall(text):
        if target.endswith(".py"):
            if not (REPO / target).is_file():
                missing.append(target)
        elif "." in target:
            module = REPO / target.replace(".", "/")
            if not any(candidate.is_file() for candidate in (module.with_suffix(".py"), module / "__main__.py")):
                missing.append(f"python -m {target}")
    assert not missing, f"{page.relative_to(REPO)} names what does not exist: {missing}"


def _serve_commands(page: Path) -> list[str]:
    commands = []
    for block in blocks(page):
        for line in shell_lines(block.body):
            line = " ".join(line.split(" #")[0].split()).removesuffix(" &")
            if "vllm serve" in line:
                commands.append(line)
    return commands


def test_every_serving_command_is_one_the_serving_recipe_test_checks() -> None:
    """tests/test_serving_recipes.py checks docs/gpu-node.md's servers start side by side; every other page's
    `vllm serve` must be one of those, byte for byte, so that check covers it too."""
    checked = set(_serve_commands(DOCS / "gpu-node.md"))
    assert checked
    other = [(page, command) for page in PAGES if page.name != "gpu-node.md" for command in _serve_commands(page)]
    assert other, "the README's GPU-node path shows its serving commands"
    unchecked = [f"{page.relative_to(REPO)}: {command}" for page, command in other if command not in checked]
    assert not unchecked, f"serving commands not in docs/gpu-node.md's checked recipe: {unchecked}"


def _leaf_commands(parser: argparse.ArgumentParser, path: str = "repro") -> list[str]:
    children = _subcommands(parser)
    if not children:
        return [path]
    return [leaf for name, child in children.items() for leaf in _leaf_commands(child, f"{path} {name}")]


def test_the_command_overview_has_a_row_for_every_command() -> None:
    overview = (DOCS / "cli.md").read_text(encoding="utf-8")
    rows = [line for line in overview.splitlines() if line.startswith("| `repro ")]
    missing = [
        command
        for command in _leaf_commands(build_parser())
        if not any(row.startswith(f"| `{command}`") or row.startswith(f"| `{command} ") for row in rows)
    ]
    assert not missing, f"docs/cli.md's command table has no row for {missing}"


def test_the_options_the_command_overview_names_exist() -> None:
    """A row of docs/cli.md's table names options in prose (`--k`, `--sequential`): each is one its command takes."""
    parser = build_parser()
    wrong = []
    for row in (DOCS / "cli.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"\| `(repro [^`]+)`", row)
        if not match:
            continue
        words, leaf = match.group(1).split()[1:], parser
        while words and words[0] in _subcommands(leaf):
            leaf = _subcommands(leaf)[words.pop(0)]
        named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", row))
        unknown = sorted(named - set(leaf._option_string_actions))
        wrong += [f"{match.group(1).split(' -')[0]}: {option}" for option in unknown]
    assert not wrong, f"docs/cli.md names options the CLI does not have: {wrong}"
