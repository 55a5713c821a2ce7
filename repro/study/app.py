"""Library entry points behind ``repro statements``, ``repro prove-study`` and ``repro study-report``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from repro.config import LeanSettings
from repro.exit_codes import ExitCode, ReproError
from repro.judge.verdict import Judge
from repro.lean import InfraStatus, build_verifier
from repro.lean.protocol import preflight_check
from repro.llm.factory import build_backend
from repro.llm.protocol import ModelBackend
from repro.study.lean_cache import StoredLeanResults
from repro.study.records import ProverEntry, StudySettings
from repro.study.runner import ProgressHook, StudyRunner, StudySummary
from repro.study.statements import read_statements
from repro.study.store import STUDY_FILENAME, StudyStore

BackendFactory = Callable[[ProverEntry], ModelBackend]


class StudyError(ReproError, RuntimeError):
    pass


def feedback_rounds_refusal(rounds: int, source: str) -> str | None:
    """Why a study cannot take ``prove.feedback_rounds`` (None when it asks for none).

    A study compares provers on their own samples: pass@j is the unbiased estimator over k samples
    drawn independently, and coverage with salvage adds only repaired texts of those samples. A
    feedback round is a further model request conditioned on Lean's errors, which this accounting has
    no place for, so a config that asks for rounds is refused rather than silently ignored.
    """
    if rounds <= 0:
        return None
    return (
        f"{source}: prove.feedback_rounds is {rounds}, but prove-study runs no Lean-feedback rounds (a study"
        " compares the provers' own samples: pass@j over k independent samples, plus salvage). Set"
        " prove.feedback_rounds to 0 for the study; `repro run --feedback-rounds N` runs them in a pipeline run"
    )


def open_study(
    study_dir: Path,
    *,
    statements_path: str | Path | None,
    provers: list[ProverEntry],
    settings: StudySettings | None,
    resume: bool,
) -> StudyStore:
    """Create a study directory, or reopen one to resume (optionally adding provers or statements)."""
    exists = (study_dir / STUDY_FILENAME).exists()
    if exists and not resume:
        if not _failed_start(study_dir):
            raise StudyError(
                f"{study_dir} already holds a study; pass --resume to continue it, or choose another --study-dir"
            )
        for path in study_dir.glob(f"{STUDY_FILENAME}*"):  # no sample was ever stored: nothing to keep
            path.unlink()
        exists = False
    if resume and not exists:
        raise StudyError(f"{study_dir}: nothing to resume (no {STUDY_FILENAME})")
    if not resume:
        if statements_path is None:
            raise StudyError("a new study needs a statement file (repro statements RUN_DIR --out FILE makes one)")
        if not provers:
            raise StudyError("a new study needs at least one --prover NAME=MODEL@BASE_URL or NAME=FILE.yaml")
        if settings is None:
            raise StudyError("a new study needs its settings (k, strategy)")
    store = StudyStore(study_dir)
    try:
        if settings is not None and not resume:
            store.save_settings(settings)
        # a statement file's header is data: checked against the study's trusted header, then replaced by it,
        # so the screen, the judge and reprove all use the configured header (red team red1, R2)
        trusted = store.settings().lean.header
        statements = read_statements(statements_path, trusted_header=trusted) if statements_path is not None else []
        store.add_statements([statement.model_copy(update={"header": trusted}) for statement in statements])
        for prover in provers:
            store.add_prover(prover)
    except Exception:
        store.close()
        raise
    return store


def _failed_start(study_dir: Path) -> bool:
    """Whether the study store there holds only a start that failed before any sample was stored."""
    store = StudyStore(study_dir, create=False)
    try:
        return not store.sample_counts()
    finally:
        store.close()


async def _check_prover_endpoints(provers: list[ProverEntry]) -> None:
    """Refuse a study whose prover endpoint is down, serves another model name, or has too small a context."""
    from repro.llm.preflight import check_endpoints, endpoints_for

    endpoints = endpoints_for((f"prover {prover.name}", prover.settings) for prover in provers)
    failures = [check for check in await check_endpoints(endpoints=endpoints) if not check.ok]
    if failures:
        lines = "\n  ".join(check.describe() for check in failures)
        raise StudyError(f"prover endpoint check failed; nothing was run:\n  {lines}", exit_code=ExitCode.unfinished)


# a prompt's tokens beside the reply when the context is not configured (repro.llm.preflight's least prompt is 256)
MIN_PROMPT_TOKENS = 2048


async def served_workers(provers: list[ProverEntry], settings: StudySettings) -> dict[str, int]:
    """Per prover on a vLLM server that reports its KV cache: the requests in flight that the cache holds whole.

    A study asks each prover for ``k`` samples of up to ``max_model_len`` tokens per request; more requests than
    fit wait in vLLM's queue, and a request's timeout (sized for its own decoding) runs out there, losing its
    samples (vLLM cancels a request whose client left). So the workers are the configured ``max_concurrency``
    bounded by what the cache holds; a server that does not report its cache keeps ``max_concurrency``.
    """
    import httpx

    from repro.config import ModelBackendName
    from repro.llm.server_defaults import kv_cache_tokens, requests_that_fit

    per_request = settings.k if settings.strategy == "parallel" else 1
    workers: dict[str, int] = {}
    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0)) as client:
        for prover in provers:
            model = prover.settings
            if model.backend != ModelBackendName.openai or not model.base_url:
                continue
            kv = await kv_cache_tokens(client, model.base_url)
            if kv is None:
                continue
            sequence = model.max_model_len or model.max_tokens + MIN_PROMPT_TOKENS
            workers[prover.name] = min(model.max_concurrency, requests_that_fit(kv, per_request, sequence))
    return workers


async def run_study(
    store: StudyStore,
    *,
    backend_factory: BackendFactory | None = None,
    lean: LeanSettings | None = None,
    on_progress: ProgressHook | None = None,
    judge: Judge | None = None,
) -> tuple[StudySummary, StoredLeanResults]:
    """Prove every (prover, statement) pair the store does not have complete yet; ``judge`` (built from the
    study's settings unless given) judges every sample the screen passes."""
    settings = store.settings()
    lean_settings = lean or settings.lean
    statements = store.statements()
    provers = store.provers()
    factory = backend_factory or (lambda prover: build_backend(prover.settings))
    backends = {prover.name: factory(prover) for prover in provers}
    await _check_prover_endpoints(provers)
    verifier = StoredLeanResults(build_verifier(lean_settings), store)
    opened: list[StoredLeanResults] = []
    try:
        header = settings.lean.header  # the trusted header, never a statement file's
        await _refuse_unready(
            verifier,
            lean_settings,
            header,
            which=f"the Lean backend ({lean_settings.backend})",
            remedy="Nothing was run. See `repro doctor`.",
        )
        others = await _toolchain_verifiers(store, provers, lean_settings, header)
        opened.extend(others.values())
        toolchains = _prover_toolchains(provers, lean_settings)
        runner = StudyRunner(
            store,
            provers,
            backends,
            verifier,
            judge or _study_judge(settings, store),
            settings,
            on_progress=on_progress,
            workers=await served_workers(provers, settings),
            verifiers={name: others[toolchain] for name, toolchain in toolchains.items() if toolchain in others},
            toolchains=toolchains,
        )
        summary = await runner.run(statements)
    finally:
        for other in opened:
            await other.close()
        await verifier.close()
    return summary, verifier


def _study_judge(settings: StudySettings, store: StudyStore) -> Judge:
    """The study's kernel judge (``settings.judge``), its verdicts kept in the study store and shared by every
    prover: identical code is judged once, across resumes."""
    from repro.judge.cached import CachedJudge
    from repro.judge.kernel import build_judge

    return CachedJudge(build_judge(settings.judge, sandbox=settings.lean.sandbox), store)


async def _refuse_unready(
    verifier: StoredLeanResults, settings: LeanSettings, header: str, *, which: str, remedy: str
) -> None:
    """Stop before any prover is called when ``which`` backend cannot check a trivial theorem, or is real
    Lean that fails its self-test: every verdict of the study would be an infrastructure failure."""
    probe = await preflight_check(verifier, header, "theorem repro_preflight : True := trivial")
    if probe.infra_status != InfraStatus.ok or probe.has_error:
        detail = probe.detail or "; ".join(m.text for m in probe.messages[:2])
        raise StudyError(
            f"{which} cannot check code: {probe.infra_status}: {detail[:400]}. {remedy}", exit_code=ExitCode.unfinished
        )
    if verifier.real_lean and settings.selftest:
        from repro.judge.selftest import SelfTestFailed, backend_of, ensure_selftest

        try:
            await ensure_selftest(settings, verifier=backend_of(verifier))
        except SelfTestFailed as failure:
            raise StudyError(f"{failure} No prover was called.", exit_code=ExitCode.unfinished) from None


def _prover_toolchains(provers: list[ProverEntry], lean: LeanSettings) -> dict[str, str]:
    """Each prover's Lean toolchain: its profile's (the one its harness was evaluated on), else the study's."""
    from repro.provers import ProfileError, get_profile

    found = {}
    for prover in provers:
        toolchain = lean.toolchain
        if prover.settings.profile and prover.settings.profile != "custom":
            with contextlib.suppress(ProfileError):  # an unknown profile is refused where it is parsed
                toolchain = get_profile(prover.settings.profile).toolchain
        found[prover.name] = toolchain
    return found


async def _toolchain_verifiers(
    store: StudyStore, provers: list[ProverEntry], lean: LeanSettings, header: str
) -> dict[str, StoredLeanResults]:
    """One checked backend per toolchain other than the study's own (its own pinned project or server)."""
    wanted = sorted(set(_prover_toolchains(provers, lean).values()) - {lean.toolchain})
    built: dict[str, StoredLeanResults] = {}
    try:
        for toolchain in wanted:
            settings = LeanSettings.model_validate(
                {**lean.model_dump(), "toolchain": toolchain, "project_path": None, "mathlib_revision": None}
            )
            verifier = StoredLeanResults(build_verifier(settings), store)
            built[toolchain] = verifier
            await _refuse_unready(
                verifier,
                settings,
                header,
                which=f"a prover needs Lean {toolchain}, whose backend",
                remedy=f"Run `repro lean setup --toolchain {toolchain}`. Nothing was run.",
            )
    except BaseException:
        for verifier in built.values():
            await verifier.close()
        raise
    return built


def prove_study(
    study_dir: str | Path,
    *,
    statements_path: str | Path | None = None,
    provers: list[ProverEntry] | None = None,
    settings: StudySettings | None = None,
    resume: bool = False,
    backend_factory: BackendFactory | None = None,
    on_progress: ProgressHook | None = None,
) -> StudySummary:
    """``repro prove-study``: open (or resume) the study and run it to completion."""
    store = open_study(
        Path(study_dir), statements_path=statements_path, provers=provers or [], settings=settings, resume=resume
    )
    try:
        if resume:  # what a judge other than today's passed is judged again (another pin, older checks: red1 R10)
            from repro.judge.currency import judge_outdated

            store.reopen_outdated_judgements(lambda v: judge_outdated(v.tool, v.tool_revision, v.toolchain, v.checks))
        summary, _ = asyncio.run(run_study(store, backend_factory=backend_factory, on_progress=on_progress))
        return summary
    finally:
        store.close()


def study_size(store: StudyStore) -> tuple[int, int]:
    """(pairs to prove, statements), for a progress bar."""
    statements = store.statements()
    return len(statements) * len(store.provers()), len(statements)
