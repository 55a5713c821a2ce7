"""Turn ``NAME=SPEC`` arguments into model settings: ``MODEL@BASE_URL`` or a YAML settings file."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from pydantic import ValidationError

from repro.config import ConfigError, ModelBackendName, ModelSettings
from repro.prompts import user_or_bundled

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def parse_model_argument(argument: str, *, api_key_env: str | None = None) -> tuple[str, ModelSettings]:
    """``NAME=MODEL@BASE_URL`` (an OpenAI-compatible endpoint) or ``NAME=settings.yaml``.

    The YAML file holds the same keys as a stage's model settings in a run config (``backend``,
    ``model``, ``base_url``, sampling parameters, ``max_concurrency``, ``script`` for tests).
    """
    if "=" not in argument:
        raise ConfigError(f"--model {argument!r}: expected NAME=SPEC, e.g. qwen=Qwen2.5-7B@http://127.0.0.1:8000/v1")
    name, spec = (part.strip() for part in argument.split("=", 1))
    if not _NAME.match(name):
        raise ConfigError(f"--model {argument!r}: the name {name!r} must be letters, digits, '.', '_' or '-'")
    path = Path(spec)
    if spec.endswith((".yaml", ".yml")) or path.is_file():
        return name, _settings_from_file(path, name)
    match = re.match(r"^(?P<model>.+?)@(?P<url>https?://\S+)$", spec)
    if not match:
        raise ConfigError(
            f"--model {name}={spec}: expected MODEL@BASE_URL (an OpenAI-compatible endpoint, e.g."
            " Qwen2.5-7B@http://127.0.0.1:8000/v1) or a YAML file of model settings"
        )
    return name, ModelSettings(
        backend=ModelBackendName.openai,
        model=match["model"],
        base_url=match["url"],
        api_key_env=api_key_env or "OPENAI_API_KEY",
    )


def _settings_from_file(path: Path, name: str) -> ModelSettings:
    path = user_or_bundled(path)  # the shipped configs/demo_models/*.yaml from any directory
    if not path.is_file():
        raise ConfigError(f"--model {name}={path}: file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ConfigError(f"--model {name}={path}: not valid YAML: {error}") from error
    if not isinstance(data, dict):
        raise ConfigError(f"--model {name}={path}: expected a mapping of model settings")
    try:
        return ModelSettings.model_validate(data)
    except ValidationError as error:
        details = "; ".join(f"{'.'.join(str(part) for part in item['loc'])}: {item['msg']}" for item in error.errors())
        raise ConfigError(f"--model {name}={path}: {details}") from None
