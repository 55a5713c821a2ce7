"""Model backends behind one protocol, with the response cache and accounting in front of them.

Names are imported on first use: the OpenAI client alone costs about a second of imports, which
commands that never call a model (``status``, ``audit``, ``--help``) should not pay.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from repro.llm.cache import cache_key
    from repro.llm.client import ModelClient, ReplayBackend
    from repro.llm.factory import build_backend, build_client, request_from_settings
    from repro.llm.json_answers import JsonAnswer, ask_json, extract_json_object, parse_json_answer
    from repro.llm.local_backends import TransformersBackend, VLLMBackend
    from repro.llm.openai_backend import OpenAIBackend
    from repro.llm.protocol import (
        ChatMessage,
        ModelBackend,
        ModelCallError,
        ModelRequest,
        ModelResponse,
        PromptTooLong,
    )
    from repro.llm.scripted import ScriptedBackend, load_script

_MODULE_OF = {
    "cache_key": "repro.llm.cache",
    "ModelClient": "repro.llm.client",
    "ReplayBackend": "repro.llm.client",
    "build_backend": "repro.llm.factory",
    "build_client": "repro.llm.factory",
    "request_from_settings": "repro.llm.factory",
    "JsonAnswer": "repro.llm.json_answers",
    "ask_json": "repro.llm.json_answers",
    "extract_json_object": "repro.llm.json_answers",
    "parse_json_answer": "repro.llm.json_answers",
    "TransformersBackend": "repro.llm.local_backends",
    "VLLMBackend": "repro.llm.local_backends",
    "OpenAIBackend": "repro.llm.openai_backend",
    "ChatMessage": "repro.llm.protocol",
    "ModelBackend": "repro.llm.protocol",
    "ModelCallError": "repro.llm.protocol",
    "ModelRequest": "repro.llm.protocol",
    "ModelResponse": "repro.llm.protocol",
    "PromptTooLong": "repro.llm.protocol",
    "ScriptedBackend": "repro.llm.scripted",
    "load_script": "repro.llm.scripted",
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'repro.llm' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "ChatMessage",
    "JsonAnswer",
    "ModelBackend",
    "ModelCallError",
    "ModelClient",
    "ModelRequest",
    "ModelResponse",
    "OpenAIBackend",
    "PromptTooLong",
    "ReplayBackend",
    "ScriptedBackend",
    "TransformersBackend",
    "VLLMBackend",
    "ask_json",
    "build_backend",
    "build_client",
    "cache_key",
    "extract_json_object",
    "load_script",
    "parse_json_answer",
    "request_from_settings",
]
