"""Prover profiles: each prover asked, sampled, parsed and checked the way its own harness does it.

``repro provers`` lists them; ``models.prove.profile`` in a run config and ``--prover NAME=PROFILE@URL``
in a study choose one. Values a config sets explicitly override the profile's and are recorded as
overrides in the run's provenance.
"""

from repro.provers.overrides import apply_profile, profile_overrides, profile_provenance
from repro.provers.profile import ProfileError, ProverProfile, statement_in_form
from repro.provers.registry import get_profile, list_profiles, profile_for_model

__all__ = [
    "ProfileError",
    "ProverProfile",
    "apply_profile",
    "get_profile",
    "list_profiles",
    "profile_for_model",
    "profile_overrides",
    "profile_provenance",
    "statement_in_form",
]
