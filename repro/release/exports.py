"""Evaluation tasks written beside a release, so users evaluate it with the tools they already use.

``repro release`` calls :func:`write_release_exports`, which writes

- ``task.py``: inspect_ai tasks ``repro_original`` and ``repro_rewritten`` (``inspect eval RELEASE/task.py``);
- ``lm_eval/``: lm-evaluation-harness tasks of the same names and a group ``repro_release``
  (``lm_eval --include_path RELEASE/lm_eval --tasks repro_rewritten``);
- ``repro_grading.py``: the grader ``repro evaluate`` uses (math-verify, last ``\\boxed{}``),
  copied verbatim so all three score answers identically.

The tasks read the release's own ``data/test.jsonl`` and need neither this toolkit nor a network;
they ask with the same prompt (``prompts/evaluate.md``) at temperature 0.
"""

from __future__ import annotations

from pathlib import Path

from repro.prompts import prompt_template

GRADING_FILE = "repro_grading.py"
INSPECT_FILE = "task.py"
LM_EVAL_DIR = "lm_eval"
MAX_TOKENS = 2048

_LOAD_GRADING = '''

def _load_grading(path: Path) -> Any:
    """The release's own grader (the one `repro evaluate` uses), loaded by path: no install needed."""
    name = "repro_release_grading"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the grader {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the file executes
    spec.loader.exec_module(module)
    return module

'''

_INSPECT_TASK = '''"""inspect_ai tasks for this repro release (written by `repro release`; regenerate rather than edit).

    inspect eval task.py --model openai/gpt-4o-mini            # both tasks
    inspect eval task.py@repro_rewritten --model vllm/Qwen/Qwen2.5-7B-Instruct

Each sample is one released instance; the scorer grades the last \\\\boxed{{}} of the reply against
the reference answer with math-verify (repro_grading.py), never with a model. Rows marked unverified
(no real Lean checked their proof) are left out, as `repro evaluate` leaves them out, unless asked:
`-T include_unverified=true` (or REPRO_INCLUDE_UNVERIFIED=1).
"""

from __future__ import annotations

import importlib.util
import json
import os
import string
import sys
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, generate

HERE = Path(__file__).resolve().parent
PROMPT = string.Template({prompt!r})
{load_grading}
GRADING = _load_grading(HERE / "{grading_file}")


def _dataset(question_field: str, answer_field: str, name: str, include_unverified: bool) -> MemoryDataset:
    lines = (HERE / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    include = include_unverified or os.environ.get("REPRO_INCLUDE_UNVERIFIED", "") not in ("", "0")
    left_out = 0 if include else sum(1 for row in rows if row.get("unverified"))
    if left_out:
        print(
            f"repro release: left out {{left_out}} of {{len(rows)}} rows marked unverified (no real Lean checked"
            " them), as repro evaluate does; -T include_unverified=true scores them too",
            file=sys.stderr,
        )
    samples = []
    for row in rows:
        if row.get("unverified") and not include:
            continue
        samples.append(
            Sample(
                id=row["instance_id"],
                input=PROMPT.substitute(question=row[question_field]),
                target=row[answer_field],
                metadata={{"level": row.get("level"), "type": row.get("type"), "unverified": row.get("unverified")}},
            )
        )
    return MemoryDataset(samples, name=name)


@scorer(metrics=[accuracy(), stderr()])
def math_verify_answer() -> Any:
    async def score(state: TaskState, target: Target) -> Score:
        grade = GRADING.grade_response(state.output.completion, target.text)
        return Score(value=CORRECT if grade.correct else INCORRECT, answer=grade.extracted, explanation=grade.method)

    return score


def _task(question_field: str, answer_field: str, name: str, include_unverified: bool) -> Task:
    return Task(
        dataset=_dataset(question_field, answer_field, name, include_unverified),
        solver=generate(),
        scorer=math_verify_answer(),
        config=GenerateConfig(temperature=0.0, max_tokens={max_tokens}),
    )


@task
def repro_original(include_unverified: bool = False) -> Task:
    """The source benchmark's questions of the released instances, against their original answers."""
    return _task("original_question", "original_answer", "repro_original", include_unverified)


@task
def repro_rewritten(include_unverified: bool = False) -> Task:
    """The proof-verified rewritten questions, against the Lean-verified new answers."""
    return _task("rewritten_question", "new_answer", "repro_rewritten", include_unverified)
'''

_LM_EVAL_UTILS = '''"""lm-evaluation-harness hooks for this repro release (written by `repro release`).

    lm_eval --model hf --model_args pretrained=... --include_path RELEASE/lm_eval --tasks repro_rewritten

Rows marked unverified (no real Lean checked their proof) are left out, as `repro evaluate` leaves them
out, unless REPRO_INCLUDE_UNVERIFIED=1 is set.
"""

from __future__ import annotations

import importlib.util
import json
import os
import string
import sys
from pathlib import Path
from typing import Any

import datasets

RELEASE = Path(__file__).resolve().parent.parent
PROMPT = string.Template({prompt!r})
FIELDS = ("instance_id", "level", "type", "original_question", "original_answer", "rewritten_question", "new_answer")
{load_grading}
GRADING = _load_grading(RELEASE / "{grading_file}")


def load_release(**kwargs: Any) -> datasets.DatasetDict:
    """The release's own rows (data/test.jsonl), as the `test` split, without the unverified ones unless asked."""
    lines = (RELEASE / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    if os.environ.get("REPRO_INCLUDE_UNVERIFIED", "") in ("", "0"):
        kept = [row for row in rows if not row.get("unverified")]
        if len(kept) < len(rows):
            print(
                f"repro release: left out {{len(rows) - len(kept)}} of {{len(rows)}} rows marked unverified (no real"
                " Lean checked them), as repro evaluate does; REPRO_INCLUDE_UNVERIFIED=1 scores them too",
                file=sys.stderr,
            )
        rows = kept
    return datasets.DatasetDict({{"test": datasets.Dataset.from_list([{{k: r.get(k) for k in FIELDS}} for r in rows])}})


def original_prompt(doc: dict[str, Any]) -> str:
    return PROMPT.substitute(question=doc["original_question"])


def rewritten_prompt(doc: dict[str, Any]) -> str:
    return PROMPT.substitute(question=doc["rewritten_question"])


def score_original(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    return {{"math_verify": float(GRADING.grade_response(results[0], doc["original_answer"]).correct)}}


def score_rewritten(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    return {{"math_verify": float(GRADING.grade_response(results[0], doc["new_answer"]).correct)}}
'''

_LM_EVAL_TASK = """# lm-evaluation-harness task for this repro release (written by `repro release`).
task: repro_{variant}
custom_dataset: !function utils.load_release
test_split: test
output_type: generate_until
doc_to_text: !function utils.{variant}_prompt
doc_to_target: {answer_field}
process_results: !function utils.score_{variant}
generation_kwargs:
  until: []
  do_sample: false
  temperature: 0.0
  max_gen_toks: {max_tokens}
metric_list:
  - metric: math_verify
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""

_LM_EVAL_GROUP = """# Both questions of every released instance; compare the two tasks' math_verify scores.
group: repro_release
task:
  - repro_original
  - repro_rewritten
metadata:
  version: 1.0
"""


def _render(template: str) -> str:
    return template.format(
        prompt=prompt_template("evaluate"),
        load_grading=_LOAD_GRADING,
        grading_file=GRADING_FILE,
        max_tokens=MAX_TOKENS,
    )


def exported_file_names() -> list[str]:
    """Paths (relative to the release) that :func:`write_release_exports` writes; the manifest lists them."""
    lm_eval = [f"{LM_EVAL_DIR}/{name}" for name in ("utils.py", "repro_original.yaml", "repro_rewritten.yaml")]
    return [GRADING_FILE, INSPECT_FILE, *lm_eval, f"{LM_EVAL_DIR}/repro_release.yaml"]


def write_release_exports(out_dir: str | Path) -> list[Path]:
    """Write the inspect_ai task, the lm-eval tasks and the shared grader beside the release data."""
    out = Path(out_dir)
    lm_eval = out / LM_EVAL_DIR
    lm_eval.mkdir(parents=True, exist_ok=True)
    # read by path, not imported: importing it would load the whole evaluate package (scipy) just to copy a file
    grader = (Path(__file__).parent.parent / "evaluate" / "grading.py").read_text(encoding="utf-8")
    files = {
        out / GRADING_FILE: "# Copied from repro.evaluate.grading by `repro release`.\n" + grader,
        out / INSPECT_FILE: _render(_INSPECT_TASK),
        lm_eval / "utils.py": _render(_LM_EVAL_UTILS),
        lm_eval / "repro_original.yaml": _LM_EVAL_TASK.format(
            variant="original", answer_field="original_answer", max_tokens=MAX_TOKENS
        ),
        lm_eval / "repro_rewritten.yaml": _LM_EVAL_TASK.format(
            variant="rewritten", answer_field="new_answer", max_tokens=MAX_TOKENS
        ),
        lm_eval / "repro_release.yaml": _LM_EVAL_GROUP,
    }
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return list(files)
