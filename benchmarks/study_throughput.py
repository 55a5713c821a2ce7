"""Coverage-study throughput: the streaming study runner versus a sequential loop, same provers, same Lean.

Three scripted provers (tests/study_world.py) with injected request latency, and the fake Lean REPL
(through the real LeanInteract client) with an injected per-check delay. The study runs each prover's
pairs on its own worker pool (the endpoint's max_concurrency) and shares the Lean pool; the sequential
loop asks one prover about one statement, checks its samples one by one, then moves on. Prints
statements per minute (a statement counts once every prover has finished it) for both, and the ratio.

    PYTHONPATH=. python benchmarks/study_throughput.py --statements 60 --k 4 --model-latency 0.2 --lean-latency 0.05
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from repro.config import ModelBackendName, ModelSettings
from repro.judge import verify_proof
from repro.lean import CachedVerifier
from repro.llm import ModelRequest, ScriptedBackend
from repro.stages.common import chat_request
from repro.stages.prove import prover_prompt
from repro.study import ProverEntry, StoredLeanResults, StudyRunner, StudySettings, StudyStatement, StudyStore
from tests import study_world as world
from tests.doubles.fake_backend import fake_repl_verifier

PROVERS = ("corrupt", "restate", "slow")


def _statements(count: int) -> list[StudyStatement]:
    rows = world.statement_rows()
    return [StudyStatement.model_validate(rows[i % len(rows)] | {"id": f"b{i:04d}"}) for i in range(count)]


def _backend(name: str, latency: float, concurrency: int) -> ScriptedBackend:
    def script(request: ModelRequest, sample_index: int) -> str:
        import re

        match = re.search(r"theorem study_(\d+)", request.prompt_text())
        return world.proof_for(name, int(match.group(1)) if match else 0, sample_index)

    return ScriptedBackend(script, model_id=name, latency_s=latency, max_concurrency=concurrency)


def _entries(concurrency: int) -> list[ProverEntry]:
    return [
        ProverEntry(
            name=name,
            settings=ModelSettings(
                backend=ModelBackendName.scripted, model=name, base_url=None, max_concurrency=concurrency
            ),
        )
        for name in PROVERS
    ]


def _verifier(lean_latency: float, workers: int) -> CachedVerifier:
    rules = [*world.LEAN_RULES, {"match": "theorem", "action": "slow", "delay_s": lean_latency}]
    return CachedVerifier(fake_repl_verifier(rules, workers=workers, timeout_s=60))


async def streaming(statements: list[StudyStatement], args: argparse.Namespace) -> float:
    with tempfile.TemporaryDirectory() as directory:
        store = StudyStore(Path(directory))
        store.add_statements(statements)
        entries = _entries(args.concurrency)
        for entry in entries:
            store.add_prover(entry)
        backends = {name: _backend(name, args.model_latency, args.concurrency) for name in PROVERS}
        verifier = StoredLeanResults(_verifier(args.lean_latency, args.workers), store)
        await verifier.check("theorem warmup : True := trivial", statements[0].header)  # start the workers
        settings = StudySettings(k=args.k)
        started = time.perf_counter()
        await StudyRunner(store, entries, dict(backends), verifier, settings).run(statements)
        elapsed = time.perf_counter() - started
        await verifier.close()
        store.close()
    return elapsed


async def sequential(statements: list[StudyStatement], args: argparse.Namespace) -> float:
    backends = {name: _backend(name, args.model_latency, 1) for name in PROVERS}
    verifier = _verifier(args.lean_latency, args.workers)
    await verifier.check("theorem warmup : True := trivial", statements[0].header)
    settings = ModelSettings(backend=ModelBackendName.scripted, model="x", base_url=None, temperature=1.0)
    started = time.perf_counter()
    for name in PROVERS:
        for statement in statements:
            request = chat_request(settings, prover_prompt(statement.statement, statement.header), n=args.k)
            response = await backends[name].generate(request)
            for text, finish in zip(response.texts, response.finish_reasons, strict=True):
                await verify_proof(statement.statement, text, verifier, header=statement.header, finish_reason=finish)
    elapsed = time.perf_counter() - started
    await verifier.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--statements", type=int, default=60)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--model-latency", type=float, default=0.2, help="seconds per prover request")
    parser.add_argument("--lean-latency", type=float, default=0.05, help="seconds per Lean check")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight per prover endpoint")
    parser.add_argument("--workers", type=int, default=2, help="fake Lean REPL workers")
    args = parser.parse_args()
    statements = _statements(args.statements)
    stream_s = asyncio.run(streaming(statements, args))
    sequential_s = asyncio.run(sequential(statements, args))
    stream_rate = len(statements) / stream_s * 60
    sequential_rate = len(statements) / sequential_s * 60
    print(
        json.dumps(
            {
                "statements": len(statements),
                "provers": len(PROVERS),
                "k": args.k,
                "model_latency_s": args.model_latency,
                "lean_latency_s": args.lean_latency,
                "concurrency_per_prover": args.concurrency,
                "lean_workers": args.workers,
                "study_statements_per_minute": round(stream_rate, 1),
                "sequential_statements_per_minute": round(sequential_rate, 1),
                "ratio": round(stream_rate / sequential_rate, 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
