"""Canonical cache keys for model responses: one key per (model, input, sampling params, sample)."""

from __future__ import annotations

import hashlib
import json

from repro.llm.protocol import ModelRequest

# sampling fields added after runs were already cached: left out of the key while unset (None, "not sent"),
# so a request that sends none of them keeps the key it always had, and one that sends any gets a new key
_OPTIONAL_SAMPLING = ("min_p", "repetition_penalty", "presence_penalty", "frequency_penalty")


def cache_key(model_id: str, request: ModelRequest, sample_index: int) -> str:
    """Backend-independent: the same model id and request hit the same entry from vLLM or an API."""
    payload = request.model_dump(mode="json", exclude={"n", "sample_offset"})
    for name in _OPTIONAL_SAMPLING:
        if payload.get(name) is None:
            payload.pop(name, None)
    canonical = json.dumps(
        {"model": model_id, "request": payload, "sample": sample_index}, sort_keys=True, ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
