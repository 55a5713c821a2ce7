"""Model backends behind one protocol, with the response cache and accounting in front of them."""

from repro.llm.cache import cache_key
from repro.llm.client import ModelClient, ReplayBackend
from repro.llm.factory import build_backend, build_client, request_from_settings
from repro.llm.hygiene import LeanExtraction, extract_lean_block, find_special_tokens
from repro.llm.json_answers import JsonAnswer, ask_json, extract_json_object, parse_json_answer
from repro.llm.local_backends import TransformersBackend, VLLMBackend
from repro.llm.openai_backend import OpenAIBackend
from repro.llm.protocol import ChatMessage, ModelBackend, ModelCallError, ModelRequest, ModelResponse
from repro.llm.scripted import ScriptedBackend, load_script

__all__ = [
    "ChatMessage",
    "JsonAnswer",
    "LeanExtraction",
    "ModelBackend",
    "ModelCallError",
    "ModelClient",
    "ModelRequest",
    "ModelResponse",
    "OpenAIBackend",
    "ReplayBackend",
    "ScriptedBackend",
    "TransformersBackend",
    "VLLMBackend",
    "ask_json",
    "build_backend",
    "build_client",
    "cache_key",
    "extract_json_object",
    "extract_lean_block",
    "find_special_tokens",
    "load_script",
    "parse_json_answer",
    "request_from_settings",
]
