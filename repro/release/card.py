"""The dataset card (``README.md``): license and attribution, the counts users filter by, the schema.

The card's YAML front matter is what the Hugging Face hub and ``datasets.load_dataset`` read
(``configs``, ``dataset_info``); its sections say how each row was checked and found.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import yaml

from repro.config import RunConfig
from repro.records import NO_ANSWER_DESCRIPTIONS, AnswerForm, NoAnswerReason
from repro.release.errors import ReleaseError
from repro.release.files import MANIFEST
from repro.release.rows import NO_LEVER, ROW_FIELDS, SPLIT, feature_yaml


@dataclass(frozen=True)
class SourceLicense:
    license: str
    attribution: str
    note: str = ""


# Only sources whose terms are known are described without the user's word; never guess the rest.
KNOWN_SOURCES: dict[str, SourceLicense] = {
    "gsm8k": SourceLicense(
        license="mit",
        attribution="GSM8K: Cobbe et al., 2021, Training Verifiers to Solve Math Word Problems (openai/gsm8k), MIT",
    ),
    "math": SourceLicense(
        license="mit",
        attribution="MATH: Hendrycks et al., 2021, Measuring Mathematical Problem Solving With the MATH Dataset",
        note=(
            "The MATH problems come from competitions (AMC 10, AMC 12, AIME and others) via AoPS; although the"
            " dataset is published under MIT, the redistribution of these problems is disputed. Check that you"
            " may redistribute derived problems before publishing this dataset."
        ),
    ),
}


def source_license(
    source: str, config: RunConfig | None, *, license: str | None, attribution: str | None
) -> SourceLicense:
    """The license and attribution the card states: the user's, else a known source's, else an error."""
    license = license or (config.dataset.license if config else None)
    attribution = attribution or (config.dataset.attribution if config else None)
    known = KNOWN_SOURCES.get(source)
    if license and attribution:
        return SourceLicense(license=license, attribution=attribution, note=known.note if known else "")
    if known is not None and not license and not attribution:
        return known
    raise ReleaseError(
        f"source {source!r}: its license and attribution are not known to repro, and it will not guess them."
        " Pass --license SPDX-ID --attribution TEXT (or set dataset.license and dataset.attribution in the config)"
    )


def combined_terms(
    sources: list[str], config: RunConfig | None, license: str | None, attribution: str | None
) -> SourceLicense:
    parts = [source_license(source, config, license=license, attribution=attribution) for source in sources]
    licenses = sorted({part.license for part in parts})
    return SourceLicense(
        license=licenses[0] if len(licenses) == 1 else "other",
        attribution="; ".join(dict.fromkeys(part.attribution for part in parts)),
        note=" ".join(dict.fromkeys(part.note for part in parts if part.note)),
    )


def _prover_section(config: RunConfig | None) -> str:
    """The prover profile the proofs were sampled with, its harness files, and any departure from them."""
    from repro.provers import profile_provenance

    prove = config.models.get("prove") if config is not None else None
    recorded = profile_provenance(prove.model_dump(mode="json")) if prove is not None else None
    if recorded is None:
        return ""
    lines = [
        f"\n## Prover\n\nProofs were sampled with the `{recorded['profile']}` profile ({prove.model if prove else ''})"
    ]
    lines[0] += ", following " + "; ".join(recorded["sources"]) + ".\n"
    if recorded.get("problem_in_prompt") == "doc comment above the theorem":
        lines.append(
            "The prompt showed each rewritten problem as a `/-- ... -/` doc comment above its theorem, as the"
            " harness's own data carry the informal statement.\n"
        )
    if recorded.get("settings_source"):
        lines.append(f"Settings source: {recorded['settings_source']}.\n")
    for key, value in recorded["overrides"].items():
        lines.append(f"- `{key}`: {value['config']!r} (the harness uses {value['profile']!r})\n")
    for entry in recorded.get("unsettled") or []:
        lines.append(f"- not settled by the harness's sources: {entry}\n")
    return "".join(lines)


_CHECK_MEANINGS = {
    "satisfiable": "Lean proved the statement's hypotheses can hold, at values read from the hypotheses themselves",
    "flagged": "no such values were found and nothing was derived from the hypotheses: audit these",
    "undecided": "Lean gave no verdict on the check (timeout or infrastructure)",
}


def _withheld_section(withheld: tuple[int, int]) -> str:
    """Rows withheld whatever the options: no statement check ran, or no evidence for the answer (red2)."""
    unchecked, unconfirmed = withheld
    if not unchecked and not unconfirmed:
        return ""
    lines = ["\n## Withheld\n\n"]
    if unchecked:
        lines.append(
            f"- {unchecked} retained rows whose statement no check ran on (`statement_checks.vacuity` off, or a run"
            " older than the checks): such a statement may be vacuous, so its answer may be anything\n"
        )
    if unconfirmed:
        lines.append(
            f"- {unconfirmed} retained rows whose `new_answer` has no stored evidence that this version's answer"
            " stage confirmed it with our Lean commands (a run older than it, or an edited store)\n"
        )
    return "".join(lines)


def _statement_check_section(counts: Counter[str | None], rows: int, flagged: tuple[int, bool] = (0, False)) -> str:
    """How many released rows each statement check outcome covers (``provenance.statement_check``), and
    whether flagged rows were withheld (the default) or released with ``--include-flagged``."""
    if not rows:
        return ""
    withheld, included = flagged
    lines = ["\n## Statement checks\n\n"]
    lines.append(
        "Before proving, repro checks each statement with its own Lean commands (never the prover's text);"
        " `provenance.statement_check` records the outcome per row.\n\n"
    )
    if included:
        lines.append(
            "Released with `--include-flagged`: rows whose statement was neither found vacuous nor shown"
            " satisfiable (flagged, undecided) are included below. Such a statement may hold for no value at all.\n\n"
        )
    else:
        lines.append(
            f"{withheld} verified rows whose statement was neither found vacuous nor shown satisfiable (flagged,"
            " undecided) were withheld; `repro release --include-flagged` releases them.\n\n"
        )
    for outcome, meaning in _CHECK_MEANINGS.items():
        lines.append(f"- {outcome}: {counts.get(outcome, 0)} of {rows} rows ({meaning})\n")
    others = {key: count for key, count in counts.items() if key not in _CHECK_MEANINGS}
    for other, count in sorted(others.items(), key=lambda item: str(item[0])):
        lines.append(f"- {'not recorded' if other is None else other}: {count} of {rows} rows\n")
    return "".join(lines)


_LEVER_MEANINGS = {
    NO_LEVER: "the prover's own sample, checked as it was sampled",
    "salvage": "a repaired text of a prover sample (special tokens removed, a fence closed, trailing text cut,"
    " or our statement re-spliced onto the prover's proof), through the same screen and judge",
    "feedback": "the prover's reply in a later feedback round, after it was shown Lean's errors",
    "study": "a proof another prover found for the same statement in a prove-study (`repro run --reprove-with`),"
    " through the same screen and judge",
}


def _proof_lever_section(counts: Counter[str], rows: int) -> str:
    """How many released proofs each lever found (``provenance.proof_lever``), and how to keep only raw ones."""
    if not rows:
        return ""
    lines = [
        "\n## How the proofs were found\n\n",
        "`provenance.proof_lever` records, per row, whether the verified proof is the prover's own sample or"
        " came from a lever. Every one passed the same screen and kernel judge. To keep only raw samples:"
        ' `ds.filter(lambda row: row["provenance"]["proof_lever"] == "none")`.\n\n',
    ]
    for lever, meaning in _LEVER_MEANINGS.items():
        lines.append(f"- {lever}: {counts.get(lever, 0)} of {rows} rows ({meaning})\n")
    for other, count in sorted((key, n) for key, n in counts.items() if key not in _LEVER_MEANINGS):
        lines.append(f"- {other}: {count} of {rows} rows\n")
    return "".join(lines)


def _answer_section(forms: Counter[str | None], metrics: dict[str, Any], rows: int) -> str:
    """Released rows per answer form, and the run's verified statements that gave no answer, and why."""
    if not rows:
        return ""
    lines = [
        "\n## Answers\n\n",
        "Every `new_answer` is what our own Lean commands confirmed from the statement in this run's answer stage"
        " (an equation's type and literal value, over `type_of%` of our statement, or an ∃ witness our command"
        " proved together with its uniqueness; never the prover's text); a row without that stored evidence is"
        " withheld. `answer_type`"
        " is its form, `answer_lean_type` its Lean type; a closed form is released as LaTeX, graded by"
        " math-verify; a tuple follows `answer_variables`.\n\n",
        "Grading with math-verify (`math_verify.verify(parse(gold), parse(prediction))`, its defaults) is lenient"
        " in two ways a user should know: numbers are compared after rounding to 6 decimal places"
        " (`float_rounding=6`: `1/3` and `0.333333` are graded equal) and a trailing percent sign is dropped"
        " (`9` and `9\\%` are graded equal).\n\n",
    ]
    for form in AnswerForm:
        lines.append(f"- {form.value}: {forms.get(form.value, 0)} of {rows} rows\n")
    if forms.get(None):
        lines.append(f"- not recorded (a run before answer forms): {forms[None]} of {rows} rows\n")
    reached, answered = metrics.get("reached", 0), sum(metrics.get("answered", {}).values())
    if reached:
        lines.append(
            f"\nOf the run's {reached} verified statements that reached the answer stage, {answered} gave a final"
            " answer. No answer:\n\n"
        )
        for reason, count in metrics.get("no_answer", {}).items():
            known = reason in {member.value for member in NoAnswerReason}
            meaning = NO_ANSWER_DESCRIPTIONS.get(NoAnswerReason(reason)) if known else None
            lines.append(f"- {reason}: {count}" + (f" ({meaning})" if meaning else "") + "\n")
        for answer_class, count in metrics.get("not_final", {}).items():
            lines.append(f"- not final ({answer_class}): {count}\n")
        if metrics.get("unfinished"):
            lines.append(f"- Lean gave no verdict (unfinished): {metrics['unfinished']}\n")
    return "".join(lines)


JudgeKey = tuple[str | None, str | None, str | None, str | None, bool]  # toolchain, tool, revision, confinement, real


def _judge_section(judges: Counter[JudgeKey], rows: int, overruled: int) -> str:
    """Which kernel judge passed the rows, per toolchain, and where it overruled the screen."""
    if not rows:
        return ""
    lines = [
        "\n## Kernel judge\n\n",
        "Every row's `verified_code` was passed by a kernel judge: our statement (after the trusted `lean_header`)"
        " and the submission compiled apart, each sandboxed, and the submission replayed in Lean's kernel in a"
        " process that shares nothing with the prover's code. The screen before it (the static layer and the"
        " REPL check) only made candidates for the judge. `provenance.judge_*` records the judge per row; a"
        " row is verified only when `provenance.verified_by_real_judge` is true.\n\n",
    ]
    for (toolchain, tool, revision, confinement, real), count in sorted(
        judges.items(), key=lambda item: tuple(str(part) for part in item[0])
    ):
        kind = "" if real else " (a stand-in, not Lean's kernel: these rows verify nothing)"
        lines.append(
            f"- toolchain {toolchain or 'not recorded'}: {tool} at {revision or 'no recorded revision'}{kind},"
            f" confinement: {confinement or 'not recorded'}: {count} of {rows} rows\n"
        )
    lines.append(
        f"\nWhere the screen passed a text and the judge rejected it, the judge won: {overruled} such texts in"
        " this run (`repro audit RUN_DIR --stage judge` lists them).\n"
    )
    return "".join(lines)


def card(
    rows: int,
    unverified: int,
    config: RunConfig | None,
    num_bytes: int,
    terms: SourceLicense,
    skip_reasons: list[str],
    unfinished: int = 0,
    *,
    statement_checks: Counter[str | None] | None = None,
    proof_levers: Counter[str] | None = None,
    flagged: tuple[int, bool] = (0, False),
    withheld: tuple[int, int] = (0, 0),
    answers: tuple[Counter[str | None], dict[str, Any]] | None = None,
    judges: Counter[JudgeKey] | None = None,
    overruled: int = 0,
) -> str:
    front = {
        "license": terms.license,
        "pretty_name": f"repro rewritten benchmark ({config.name if config else 'run'})",
        "task_categories": ["question-answering"],
        "tags": ["math", "lean4", "formal-verification", "contamination-resistant"],
        "configs": [{"config_name": "default", "data_files": [{"split": SPLIT, "path": f"data/{SPLIT}.parquet"}]}],
        "dataset_info": {
            "features": feature_yaml(ROW_FIELDS),
            "splits": [{"name": SPLIT, "num_bytes": num_bytes, "num_examples": rows}],
        },
    }
    warning = ""
    if unverified:
        warning = (
            f"\n> **Warning:** {unverified} of {rows} rows were NOT checked by a real Lean backend and passed by a"
            " real kernel judge (`unverified: true`). Do not use them as verified references.\n"
        )
    if unfinished:
        warning += (
            f"\n> **Unfinished run:** {unfinished} drawn problems were never finished (an endpoint or Lean failed,"
            " or the run was stopped); this release holds only what was finished, so its figures are not those of"
            " the whole selection.\n"
        )
    source = _judge_section(judges or Counter(), rows, overruled)
    source += _statement_check_section(statement_checks or Counter(), rows, flagged)
    source += _withheld_section(withheld)
    source += _answer_section(*(answers or (Counter(), {})), rows)
    source += _proof_lever_section(proof_levers or Counter(), rows)
    source += f"\n## Source\n\n{terms.attribution}. License: {terms.license}.\n"
    source += _prover_section(config)
    if terms.note:
        source += f"\n> **Redistribution:** {terms.note}\n"
    if skip_reasons:
        source += f"\n## Skipped source rows ({len(skip_reasons)})\n\n" + "".join(
            f"- {reason}\n" for reason in skip_reasons
        )
    return (
        "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n\n"
        f"# repro rewritten benchmark\n{warning}\n"
        "Each row is a rewritten problem whose reference answer (`new_answer`) our own Lean commands confirmed\n"
        "from its Lean 4 statement, and whose proof passed repro's screen and its kernel judge (the answer is\n"
        "never read from the proof). `verified_code` is exactly what Lean checked after\n"
        "`lean_header`; `provenance` records models per stage, the Lean toolchain, the Mathlib revision, the\n"
        "verifier, the kernel judge and the proof hash.\n"
        f"Files: `data/{SPLIT}.parquet` and `data/{SPLIT}.jsonl` (same rows).\n\n"
        f"Re-verify with `repro reverify DIR` (it also checks every file against `{MANIFEST}`).\n" + source
    )
