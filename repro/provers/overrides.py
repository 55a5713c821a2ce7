"""A profile under a stage's model settings: it fills what the config leaves unset, and nothing else.

A value the config sets explicitly wins (a smaller budget for a quick look, another temperature for an
ablation) and is reported as an override, so a result can always be traced back to the harness values
it departed from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from repro.provers.registry import get_profile


def apply_profile(data: Mapping[str, Any]) -> dict[str, Any]:
    """Raw model settings with the named profile's values filled in where the config has none."""
    filled = dict(data)
    name = filled.get("profile")
    if not name:
        return filled
    profile = get_profile(str(name))
    if "model" not in filled and profile.model is not None:
        filled["model"] = profile.model
    for key, value in profile.sampling().items():
        filled.setdefault(key, value)
    return filled


def profile_overrides(settings: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{key: {"profile": harness value, "config": value used}}`` for each sampling value that departs."""
    name = settings.get("profile")
    if not name:
        return {}
    profile = get_profile(str(name))
    departures: dict[str, dict[str, Any]] = {}
    for key, value in profile.sampling().items():
        if key in settings and settings[key] != value:
            departures[key] = {"profile": value, "config": settings[key]}
    return departures


def profile_provenance(settings: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a run or release records about its prover: the profile, its harness files, and the departures."""
    name = settings.get("profile")
    if not name:
        return None
    profile = get_profile(str(name))
    return {
        "profile": profile.name,
        "harness_model": profile.model,
        "toolchain": profile.toolchain,
        "sources": list(profile.sources),
        "overrides": profile_overrides(settings),
        # what the prompt showed besides the statement: the DeepSeek lineage's data put the problem above the
        # theorem as a doc comment (profile.problem_docstring); Kimina's prompt has a "# Problem:" line
        "problem_in_prompt": (
            "doc comment above the theorem"
            if profile.problem_docstring
            else "prompt line"
            if "kimina" in profile.name
            else None
        ),
        "settings_source": profile.settings_source,
        "unsettled": list(profile.unsettled),
    }
