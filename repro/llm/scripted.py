"""Deterministic responses for tests and the offline demo. Everything it produces is marked scripted.

A script is either a callable ``(request, sample_index) -> str | (str, finish_reason)`` or a
YAML/JSON file holding a list of rules ``{when: REGEX, reply: TEXT | [TEXT, ...], finish_reason}``:
the first rule whose regex matches the prompt text answers; a list of replies is indexed by the
sample index (the last one repeats).
"""

from __future__ import annotations

import asyncio
import importlib
import re
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from repro.exit_codes import ReproError
from repro.llm.protocol import FinishReason, ModelCallError, ModelRequest, ModelResponse

ScriptReply = str | tuple[str, FinishReason]
ScriptFunction = Callable[[ModelRequest, int], ScriptReply]


_RULE_KEYS = frozenset({"when", "reply", "finish_reason"})


class ScriptError(ReproError, ValueError):
    """A scripted model that cannot be loaded: a rules file or ``module:function`` that is not there or not right."""


def _rules_from_file(path: Path) -> ScriptFunction:
    if not path.is_file():
        raise ScriptError(f"script {path}: no such rules file (or give package.module:function)")
    try:
        rules = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ScriptError(f"{path}: not valid YAML: {error}") from None
    if not isinstance(rules, list):
        raise ScriptError(f"{path}: expected a list of rules {{when, reply}}")
    compiled = []
    for index, rule in enumerate(rules):
        if not isinstance(rule, dict) or "reply" not in rule:
            raise ScriptError(f"{path}: rule {index} needs a 'reply' (rules are {{when: REGEX, reply: TEXT}})")
        unknown = sorted(set(rule) - _RULE_KEYS)
        if unknown:
            raise ScriptError(
                f"{path}: rule {index}: unknown key {unknown[0]!r}; a rule has {', '.join(sorted(_RULE_KEYS))}"
            )
        compiled.append((re.compile(str(rule.get("when", "")), re.DOTALL), rule))

    def respond(request: ModelRequest, sample_index: int) -> ScriptReply:
        text = request.prompt_text()
        for pattern, rule in compiled:
            if pattern.search(text):
                reply = rule["reply"]
                chosen = reply[min(sample_index, len(reply) - 1)] if isinstance(reply, list) else reply
                return str(chosen), rule.get("finish_reason", "stop")
        raise LookupError("no scripted rule matches the prompt")

    return respond


def load_script(spec: str) -> ScriptFunction:
    """``package.module:function`` or a path to a rules file."""
    if ":" in spec and not Path(spec).exists():
        module_name, attribute = spec.split(":", 1)
        try:
            target: Any = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as error:
            hint = "a script is package.module:function or a rules file"
            raise ScriptError(f"script {spec!r}: {error} ({hint})") from None
        return target() if isinstance(target, type) else target
    return _rules_from_file(Path(spec))


class ScriptedBackend:
    scripted = True

    def __init__(
        self,
        script: ScriptFunction,
        *,
        model_id: str = "scripted",
        latency_s: float = 0.0,
        max_concurrency: int | None = None,
    ) -> None:
        self.script = script
        self.model_id = model_id
        self.backend_id = "scripted"
        self.latency_s = latency_s
        self.calls = 0
        # the latest requests, for inspection; bounded so a long scripted run does not grow memory
        self.requests: deque[ModelRequest] = deque(maxlen=1000)
        self._semaphore = asyncio.Semaphore(max_concurrency) if max_concurrency else None

    async def _generate(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        self.requests.append(request)
        started = time.perf_counter()
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        texts: list[str] = []
        finish: list[FinishReason] = []
        for index in range(request.n):
            try:
                reply = self.script(request, request.sample_offset + index)
            except LookupError as error:
                raise ModelCallError(f"scripted model {self.model_id}", str(error)) from error
            text, reason = reply if isinstance(reply, tuple) else (reply, "stop")
            texts.append(text)
            finish.append(reason)
        return ModelResponse(
            texts=texts,
            finish_reasons=finish,
            tokens_in=len(request.prompt_text()) // 4,
            tokens_out=sum(len(t) // 4 for t in texts),
            latency_s=time.perf_counter() - started,
            backend_id=self.backend_id,
            model_id=self.model_id,
            scripted=True,
        )

    async def generate(self, request: ModelRequest) -> ModelResponse:
        if self._semaphore is None:
            return await self._generate(request)
        async with self._semaphore:
            return await self._generate(request)
