"""Ask every model to solve every released instance twice (original and rewritten) and grade it.

Requests go through :class:`repro.llm.ModelClient`, so responses are cached by content in a run
store inside the evaluation directory (``model_cache/``; a rerun or a resumed run never pays twice),
concurrency is bounded per endpoint by the backend and overall by ``concurrency``, and a failed
request leaves its item unanswered for ``--resume`` instead of recording a wrong answer.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from repro.config import CacheMode, ModelSettings
from repro.dirlock import hold_directory
from repro.evaluate.grading import grade_response
from repro.evaluate.records import EvalAnswer, EvalModel, Variant
from repro.evaluate.store import EVAL_STORE_FILENAME, EvalStore
from repro.exit_codes import ReproError
from repro.llm.cache import cache_key
from repro.llm.client import ModelClient
from repro.llm.factory import build_backend, request_from_settings
from repro.llm.preflight import preflight_models_async
from repro.llm.protocol import ChatMessage, ModelBackend, ModelCallError, ModelRequest
from repro.prompts import prompt_version, render_prompt
from repro.records import ReleasedInstance
from repro.release import SPLIT, read_release
from repro.store import RunStore

PROMPT_NAME = "evaluate"
# the model layer's response cache, a run store of its own (kept apart so the directory is not taken for a run)
MODEL_CACHE_DIR = "model_cache"


class EvaluationError(ReproError, RuntimeError):
    pass


class EvaluationPlan(BaseModel):
    """What to evaluate: a release, where to keep the evaluation, which models, how many samples."""

    model_config = ConfigDict(extra="forbid")
    release_dir: Path
    eval_dir: Path
    # on --resume, empty means "the stored models" and None "the stored sample count"
    models: dict[str, ModelSettings] = Field(default_factory=dict)
    samples: int | None = Field(None, ge=1)
    resume: bool = False
    concurrency: int = Field(16, ge=1)
    include_unverified: bool = False


class EvaluationSummary(BaseModel):
    items: int
    already_done: int
    answered: int
    failed: int
    excluded_unverified: int = 0
    errors: list[str] = Field(default_factory=list)


def release_fingerprint(release_dir: Path) -> str:
    """The hash of the released rows, so a resumed evaluation is known to grade the same release."""
    data = (release_dir / "data" / f"{SPLIT}.jsonl").read_bytes()
    return hashlib.sha256(data).hexdigest()


def question_of(instance: ReleasedInstance, variant: Variant) -> str:
    return instance.original_question if variant == Variant.original else instance.rewritten_question


def reference_of(instance: ReleasedInstance, variant: Variant) -> str:
    return instance.original_answer if variant == Variant.original else instance.new_answer


def build_request(settings: ModelSettings, question: str, samples: int) -> ModelRequest:
    prompt = render_prompt(PROMPT_NAME, question=question)
    return request_from_settings(
        settings, messages=[ChatMessage(role="user", content=prompt)], n=samples, json_mode=False
    )


def _plan_meta(plan: EvaluationPlan, fingerprint: str) -> dict[str, str]:
    return {
        "release_dir": str(plan.release_dir.resolve()),
        "release_fingerprint": fingerprint,
        "prompt_version": prompt_version(PROMPT_NAME),
        "samples": str(plan.samples),
        "include_unverified": str(plan.include_unverified).lower(),
    }


# what a resumed evaluation may change about a model: where and how it is reached, never what it answers
_ENDPOINT_KEYS = frozenset(
    {"base_url", "api_key_env", "timeout_s", "min_tokens_per_s", "max_retries", "max_concurrency"}
)


def _answering(settings: ModelSettings) -> dict[str, object]:
    return settings.model_dump(mode="json", exclude=set(_ENDPOINT_KEYS))


def _resumed_plan(store: EvalStore, plan: EvaluationPlan, fingerprint: str) -> EvaluationPlan:
    """The plan a resume runs: the stored models (with any new endpoints given) and sample count.

    Raises :class:`EvaluationError` when the release, prompt, sample count or a model's sampling differ.
    """
    stored_models = {model.name: model.settings for model in store.models()}
    samples = plan.samples if plan.samples is not None else int(store.get_meta("samples") or 1)
    plan = plan.model_copy(update={"samples": samples})
    expected = _plan_meta(plan, fingerprint)
    for key in ("release_fingerprint", "prompt_version", "samples", "include_unverified"):
        stored = store.get_meta(key)
        if stored != expected[key]:
            raise EvaluationError(
                f"{plan.eval_dir}: cannot resume: {key} was {stored}, now {expected[key]};"
                " use a new --eval-dir for a different release, prompt or sample count"
            )
    if not plan.models:
        return plan.model_copy(update={"models": stored_models})
    changed = sorted(
        name
        for name in set(stored_models) | set(plan.models)
        if name not in stored_models
        or name not in plan.models
        or _answering(stored_models[name]) != _answering(plan.models[name])
    )
    if changed:
        raise EvaluationError(
            f"{plan.eval_dir}: cannot resume: models differ from the stored evaluation ({', '.join(changed)});"
            " resume without --model to use the stored ones, or pass the same models and sampling options"
            " (only endpoints, keys, timeouts, retries and concurrency may change)"
        )
    return plan


async def open_evaluation(
    plan: EvaluationPlan, *, before_creating: Callable[[EvaluationPlan], Awaitable[None]] | None = None
) -> tuple[EvalStore, list[ReleasedInstance], int, EvaluationPlan]:
    """Open (or create) the evaluation store for ``plan``, refusing to mix two different evaluations.

    Rows whose proof no real Lean checked (``unverified: true``) have no verified reference answer,
    so they are left out unless the plan includes them explicitly; returns how many were left out,
    and the plan as resolved (a resume's stored models and sample count). Nothing is created until
    the plan is valid and ``before_creating(plan)`` (the endpoint preflight) has passed; a store that
    holds only a failed start (no answer) is not an evaluation to protect: a new start replaces it.
    """
    released = read_release(plan.release_dir)
    if not released:
        raise EvaluationError(f"{plan.release_dir}: the release has no instances")
    exists = (plan.eval_dir / EVAL_STORE_FILENAME).exists()
    if plan.resume and exists and not plan.include_unverified:
        plan = plan.model_copy(update={"include_unverified": _stored_include_unverified(plan.eval_dir)})
    instances = [i for i in released if plan.include_unverified or not i.unverified]
    if not instances:
        raise EvaluationError(
            f"{plan.release_dir}: every row is marked unverified (no real Lean checked its proof);"
            " pass --include-unverified to evaluate them anyway"
        )
    fingerprint = release_fingerprint(plan.release_dir)
    if exists and not plan.resume and _answers_stored(plan.eval_dir):
        raise EvaluationError(
            f"{plan.eval_dir}: an evaluation with answers is here; pass --resume to continue it, or choose"
            " another --eval-dir"
        )
    if plan.resume and not exists:
        raise EvaluationError(
            f"{plan.eval_dir}: nothing to resume (no {EVAL_STORE_FILENAME}); start it without --resume"
        )
    if not plan.resume and not plan.models:
        raise EvaluationError("a new evaluation needs at least one --model NAME=SPEC")
    if plan.resume:
        store = EvalStore(plan.eval_dir)
        try:
            plan = _resumed_plan(store, plan, fingerprint)
            if before_creating is not None:
                await before_creating(plan)
        except BaseException:
            store.close()
            raise
        return store, instances, len(released) - len(instances), plan
    plan = plan.model_copy(update={"samples": plan.samples or 1})
    if before_creating is not None:
        await before_creating(plan)
    if exists:  # a failed start: no answer was stored, so nothing is lost
        for path in plan.eval_dir.glob(f"{EVAL_STORE_FILENAME}*"):
            path.unlink()
    store = EvalStore(plan.eval_dir)
    models = [EvalModel(name=name, settings=settings) for name, settings in plan.models.items()]
    store.set_plan(_plan_meta(plan, fingerprint), models, instances)
    return store, instances, len(released) - len(instances), plan


def _stored_include_unverified(eval_dir: Path) -> bool:
    """Whether the stored evaluation included unverified rows: a resume keeps it without being told."""
    store = EvalStore(eval_dir, create=False)
    try:
        return store.get_meta("include_unverified") == "true"
    finally:
        store.close()


def _answers_stored(eval_dir: Path) -> bool:
    store = EvalStore(eval_dir, create=False)
    try:
        return bool(store.answered())
    finally:
        store.close()


async def run_evaluation(
    plan: EvaluationPlan,
    *,
    backends: dict[str, ModelBackend] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> EvaluationSummary:
    """Answer and grade every (model, instance, variant) not yet stored. ``progress(done, total)``."""
    with hold_directory(plan.eval_dir, command="repro evaluate"):
        return await _evaluate_held(plan, backends, progress)


async def _evaluate_held(
    plan: EvaluationPlan,
    backends: dict[str, ModelBackend] | None,
    progress: Callable[[int, int], None] | None,
) -> EvaluationSummary:
    async def preflight(resolved: EvaluationPlan) -> None:
        # every endpoint answers before anything is stored (a resume checks the stored models')
        used = [(name, settings) for name, settings in resolved.models.items() if name not in (backends or {})]
        await preflight_models_async(used)

    store, instances, excluded, plan = await open_evaluation(plan, before_creating=preflight)
    cache = RunStore(plan.eval_dir / MODEL_CACHE_DIR)
    try:
        clients = {
            name: ModelClient(
                (backends or {}).get(name) or build_backend(settings),
                store=cache,
                stage="evaluate",
                cache_mode=CacheMode.read_write,
            )
            for name, settings in plan.models.items()
        }
        done = store.answered()
        todo = [
            (name, instance, variant)
            for name in plan.models
            for instance in instances
            for variant in Variant
            if (name, instance.instance_id, variant.value) not in done
        ]
        total = len(plan.models) * len(instances) * len(Variant)
        summary = EvaluationSummary(
            items=total, already_done=total - len(todo), answered=0, failed=0, excluded_unverified=excluded
        )
        finished = summary.already_done
        if progress:
            progress(finished, total)
        bound = asyncio.Semaphore(plan.concurrency)

        async def answer(name: str, instance: ReleasedInstance, variant: Variant) -> None:
            nonlocal finished
            settings = plan.models[name]
            request = build_request(settings, question_of(instance, variant), plan.samples or 1)
            async with bound:
                try:
                    response = await clients[name].generate(request)
                except ModelCallError as error:
                    summary.failed += 1
                    summary.errors.append(f"{name} {instance.instance_id} {variant.value}: {error}")
                    return
            reference = reference_of(instance, variant)
            answers = []
            for sample, (text, finish) in enumerate(zip(response.texts, response.finish_reasons, strict=True)):
                grade = grade_response(text, reference)
                answers.append(
                    EvalAnswer(
                        model=name,
                        instance_id=instance.instance_id,
                        variant=variant,
                        sample=sample,
                        response=text,
                        finish_reason=finish,
                        reference=reference,
                        extracted=grade.extracted,
                        correct=grade.correct,
                        grading_method=grade.method,
                        cache_key=cache_key(clients[name].model_id, request, sample),
                    )
                )
            store.record_answers(answers)
            summary.answered += 1
            finished += 1
            if progress:
                progress(finished, total)

        await asyncio.gather(*(answer(*item) for item in todo))
        return summary
    finally:
        cache.close()
        store.close()
