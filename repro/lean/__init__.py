"""Lean verification: backends behind one protocol, the soundness gate and the failure taxonomy."""

from repro.lean.cached import CachedVerifier, lean_cache_key
from repro.lean.factory import build_verifier
from repro.lean.fake_backend import fake_repl_verifier, make_fake_repl_home
from repro.lean.fleet import KiminaFleet
from repro.lean.gate import STANDARD_AXIOMS, Verdict, forbidden_constructs, graft, verify_proof
from repro.lean.kimina import KiminaVerifier
from repro.lean.project import LeanHealth, SetupError, lean_health, setup_lean_project
from repro.lean.protocol import InfraStatus, LeanMessage, LeanResult, Verifier, axioms_reported
from repro.lean.repl_pool import ReplPoolVerifier
from repro.lean.source import ends_in_sorry, find_theorem, normalize, statement_parts, theorems
from repro.lean.taxonomy import TaxonomyFact, taxonomy_facts

__all__ = [
    "STANDARD_AXIOMS",
    "CachedVerifier",
    "InfraStatus",
    "KiminaFleet",
    "KiminaVerifier",
    "LeanHealth",
    "LeanMessage",
    "LeanResult",
    "ReplPoolVerifier",
    "SetupError",
    "TaxonomyFact",
    "Verdict",
    "Verifier",
    "axioms_reported",
    "build_verifier",
    "ends_in_sorry",
    "fake_repl_verifier",
    "find_theorem",
    "forbidden_constructs",
    "graft",
    "lean_cache_key",
    "lean_health",
    "make_fake_repl_home",
    "normalize",
    "setup_lean_project",
    "statement_parts",
    "taxonomy_facts",
    "theorems",
    "verify_proof",
]
