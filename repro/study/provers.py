"""Prover specs on the command line: ``NAME=MODEL@BASE_URL`` or ``NAME=FILE.yaml``."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from repro.config import ModelBackendName, ModelSettings
from repro.study.records import ProverEntry

# Neural provers are sampled, not decoded greedily: k identical samples would make pass@k meaningless.
PROVER_DEFAULTS = {"temperature": 1.0, "top_p": 0.95, "max_tokens": 8192}


class ProverSpecError(ValueError):
    pass


def parse_prover_spec(spec: str, *, api_key_env: str | None = "OPENAI_API_KEY") -> ProverEntry:
    """``NAME=MODEL@BASE_URL`` (an OpenAI-compatible endpoint) or ``NAME=FILE.yaml`` (any backend's settings)."""
    name, separator, target = spec.partition("=")
    name, target = name.strip(), target.strip()
    if not separator or not name or not target:
        raise ProverSpecError(f"--prover {spec!r}: expected NAME=MODEL@BASE_URL or NAME=FILE.yaml")
    if not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise ProverSpecError(f"--prover {spec!r}: the name {name!r} may hold letters, digits, '-', '_' and '.'")
    path = Path(target)
    if path.suffix in (".yaml", ".yml", ".json") or path.is_file():
        if not path.is_file():
            raise ProverSpecError(f"--prover {spec!r}: settings file {path} not found")
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ProverSpecError(f"--prover {spec!r}: {path} must hold a mapping of model settings")
        merged = {**PROVER_DEFAULTS, **data}
        if merged.get("backend") == ModelBackendName.scripted.value:
            merged.setdefault("base_url", None)
            merged.setdefault("api_key_env", None)
        try:
            settings = ModelSettings.model_validate(merged)
        except ValidationError as error:
            first = error.errors()[0]
            key = ".".join(str(part) for part in first["loc"])
            raise ProverSpecError(f"--prover {spec!r}: {path}: {key}: {first['msg']}") from None
        return ProverEntry(name=name, settings=settings)
    model, at, base_url = target.rpartition("@")
    if not at or not model or not base_url.startswith(("http://", "https://")):
        raise ProverSpecError(f"--prover {spec!r}: expected MODEL@http(s)://HOST/v1 or a settings file")
    settings = ModelSettings(
        backend=ModelBackendName.openai, model=model, base_url=base_url, api_key_env=api_key_env, **PROVER_DEFAULTS
    )
    return ProverEntry(name=name, settings=settings)
