"""Lean clients behind one protocol, toolchains, project setup, the sandbox, statement checks and the
readers of Lean text. What decides "verified" lives in :mod:`repro.judge`, which imports this package."""

from repro.lean.cached import CachedVerifier, lean_cache_key
from repro.lean.factory import build_verifier
from repro.lean.fleet import KiminaFleet
from repro.lean.kimina import KiminaVerifier
from repro.lean.project import LeanHealth, SetupError, lean_health, setup_lean_project
from repro.lean.protocol import InfraStatus, LeanMessage, LeanResult, Verifier, axioms_reported
from repro.lean.repl_pool import ReplPoolVerifier
from repro.lean.sandbox import (
    SandboxStatus,
    SandboxUnavailable,
    ToolchainBinary,
    WorkerSandbox,
    confinement,
    resolve_toolchain_binary,
    sandboxed,
)
from repro.lean.tables import DEFAULT_OPEN_ALLOWLIST
from repro.lean.taxonomy import TaxonomyFact, taxonomy_facts
from repro.lean.text import (
    Kind,
    LeanCode,
    ProverOutput,
    Statement,
    StatementError,
    Token,
    ends_in_sorry,
    final_proposition,
    lex,
    normalize,
    read_output,
    read_statement,
    significant,
    top_level_equation,
)
from repro.lean.toolchains import DEFAULT_TOOLCHAIN, Toolchain, UnknownToolchain, get_toolchain, list_toolchains

__all__ = [
    "DEFAULT_OPEN_ALLOWLIST",
    "DEFAULT_TOOLCHAIN",
    "CachedVerifier",
    "InfraStatus",
    "Kind",
    "KiminaFleet",
    "KiminaVerifier",
    "LeanCode",
    "LeanHealth",
    "LeanMessage",
    "LeanResult",
    "ProverOutput",
    "ReplPoolVerifier",
    "SandboxStatus",
    "SandboxUnavailable",
    "Statement",
    "StatementError",
    "Token",
    "SetupError",
    "TaxonomyFact",
    "Toolchain",
    "ToolchainBinary",
    "UnknownToolchain",
    "Verifier",
    "WorkerSandbox",
    "axioms_reported",
    "build_verifier",
    "confinement",
    "ends_in_sorry",
    "final_proposition",
    "get_toolchain",
    "lean_cache_key",
    "lean_health",
    "lex",
    "list_toolchains",
    "normalize",
    "read_output",
    "read_statement",
    "resolve_toolchain_binary",
    "sandboxed",
    "setup_lean_project",
    "significant",
    "taxonomy_facts",
    "top_level_equation",
]
