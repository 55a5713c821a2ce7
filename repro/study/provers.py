"""Prover specs on the command line: ``NAME=PROFILE@BASE_URL``, ``NAME=MODEL@BASE_URL`` or ``NAME=FILE.yaml``.

Every prover is asked the way its own harness asks it: a named profile brings its prompt, statement form,
sampling and budget; a model id that a profile's harness loads (``Goedel-LM/Goedel-Prover-V2-32B``) picks
that profile; anything else gets the `custom` profile (repro's prompt, T=1.0, top_p=0.95, 8,192 tokens).
Values a settings file sets explicitly override the profile's.
"""

from __future__ import annotations

import yaml
from pydantic import ValidationError

from repro.config import ModelBackendName, ModelSettings
from repro.exit_codes import ReproError
from repro.prompts import user_or_bundled
from repro.provers import ProfileError, get_profile, profile_for_model
from repro.study.records import ProverEntry

# Neural provers are sampled, not decoded greedily: k identical samples would make pass@k meaningless.
# (These are the `custom` profile's values; a model with a profile gets its harness's instead.)
PROVER_DEFAULTS = {"temperature": 1.0, "top_p": 0.95, "max_tokens": 8192}


def _with_profile(data: dict[str, object]) -> dict[str, object]:
    """Settings that name a profile: the one given, the one whose harness loads the model, or `custom`."""
    if data.get("profile"):
        return data
    model = data.get("model")
    profile = profile_for_model(str(model)) if isinstance(model, str) else None
    if profile is not None:
        return {**data, "profile": profile.name}
    return {**PROVER_DEFAULTS, "profile": "custom", **data}


class ProverSpecError(ReproError, ValueError):
    pass


def parse_prover_spec(spec: str, *, api_key_env: str | None = "OPENAI_API_KEY") -> ProverEntry:
    """``NAME=MODEL@BASE_URL`` (an OpenAI-compatible endpoint) or ``NAME=FILE.yaml`` (any backend's settings)."""
    name, separator, target = spec.partition("=")
    name, target = name.strip(), target.strip()
    if not separator or not name or not target:
        raise ProverSpecError(f"--prover {spec!r}: expected NAME=MODEL@BASE_URL or NAME=FILE.yaml")
    if not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        raise ProverSpecError(f"--prover {spec!r}: the name {name!r} may hold letters, digits, '-', '_' and '.'")
    path = user_or_bundled(target)  # the shipped configs/demo_models/*.yaml from any directory
    if path.suffix in (".yaml", ".yml", ".json") or path.is_file():
        if not path.is_file():
            raise ProverSpecError(f"--prover {spec!r}: settings file {path} not found")
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict):
            raise ProverSpecError(f"--prover {spec!r}: {path} must hold a mapping of model settings")
        merged = _with_profile(data)
        if merged.get("backend") == ModelBackendName.scripted.value:
            merged.setdefault("base_url", None)
            merged.setdefault("api_key_env", None)
        try:
            settings = ModelSettings.model_validate(merged)
        except ValidationError as error:
            from repro.config import explain_validation

            where = f"--prover {spec!r}: {path}"
            raise ProverSpecError(explain_validation(error, ModelSettings, where=where)) from None
        return ProverEntry(name=name, settings=settings)
    model, at, base_url = target.rpartition("@")
    if not at or not model or not base_url.startswith(("http://", "https://")):
        raise ProverSpecError(
            f"--prover {spec!r}: expected PROFILE@http(s)://HOST/v1, MODEL@http(s)://HOST/v1 or a settings file"
        )
    fields: dict[str, object] = {"backend": ModelBackendName.openai.value, "base_url": base_url}
    fields["api_key_env"] = api_key_env
    try:
        profile = get_profile(model)
    except ProfileError:
        fields["model"] = model
    else:
        if profile.model is None:
            raise ProverSpecError(f"--prover {spec!r}: the {profile.name} profile needs a model: NAME=FILE.yaml")
        fields.update(profile=profile.name, model=profile.model)
    try:
        settings = ModelSettings.model_validate(_with_profile(fields))
    except ValidationError as error:
        first = error.errors()[0]
        raise ProverSpecError(f"--prover {spec!r}: {first['msg']}") from None
    return ProverEntry(name=name, settings=settings)
