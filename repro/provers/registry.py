"""The registered prover profiles, each transcribed from its own harness (facts only; no harness code).

Sources read (repository, path):

- Goedel-LM/Goedel-Prover-V2 ``src/utils.py`` (``DeepSeekCoTHandler``: prompt, ``:= by sorry``, the
  header with ``maxHeartbeats 0``, last ```` ```lean4 ```` block; ``KiminaCoTHandler``: Kimina's system
  message and prompt, ``:= by``; ``get_error_str``: the feedback format), ``src/inference.py`` (T=1.0,
  top_p=0.95, ``max_tokens = max_model_len``), ``scripts/pipeline.sh`` (``MAX_MODEL_LEN=40960``,
  ``TEMPERATURE=1.0``), ``lean_compiler/repl_scheduler.py`` (``PROOF_TIMEOUT = 300``,
  ``DEFAULT_IMPORTS``), ``README.md`` (Lean 4.9 and its Mathlib, following DeepSeek-Prover-V1.5).
- deepseek-ai/DeepSeek-Prover-V2 ``README.md`` (quick start: header with ``maxHeartbeats 0``, the CoT
  prompt with a newline before the closing fence, ``:= by\\n  sorry``, ``max_new_tokens=8192``; the 7B
  model "features an extended context length of up to 32K tokens").
- MoonshotAI/Kimina-Prover-Preview ``README.md`` (context window up to 32K tokens for training and
  inference); ``kimina_prover_demo/error_fix.py`` (Lean server check ``timeout=60``). The sampling values
  (T=0.6, top_p=0.95, max_tokens=8096) and the header with ``maxHeartbeats 400000`` are those of the
  Kimina-Prover-Preview-Distill model cards' vLLM example (huggingface.co/AI-MO), which the Goedel harness
  cites for the prompt. The paper's numbers were not produced with those: "Evaluations utilize a 32K token
  context length" (Kimina_Prover_Preview.pdf §3.1) and the released solutions (``minif2f_test_solved.zip``)
  use ``maxHeartbeats 0`` under Lean v4.15.0. So each size has two profiles, the model card's and the
  paper's, and neither claims the toolchain is settled (the paper also says "the Lean 4 version from
  DeepSeek-ProverV1.5").
- deepseek-ai/DeepSeek-Prover-V1.5 ``prover/utils.py`` (``cot_prompt``, ``LEAN4_DEFAULT_HEADER``,
  ``post_process_output``), ``configs/sampling.py`` (T=1, top_p=0.95, max_tokens=2048,
  ``lean_timeout = 300``), ``datasets/minif2f.jsonl`` (statements end ``:= by\\n``), ``quick_start.py``.

Toolchains: Goedel-Prover-V2, DeepSeek-Prover-V2 and DeepSeek-Prover-V1.5 use Lean v4.9.0 and its
Mathlib (the V1.5 environment); Kimina-Prover Preview uses v4.15.0.

Problem text: the DeepSeek-lineage harnesses take the statement as their data store it, and their data put
the informal problem above the theorem as a doc comment (DeepSeek-Prover-V1.5 ``datasets/minif2f.jsonl``
``informal_prefix``, inserted by ``prover/utils.py`` ``cot_prompt``; Goedel-Prover-V2 ``dataset/minif2f.jsonl``
``lean4_code``; the DeepSeek-Prover-V2 quick start's statement). So those profiles show it there too.
"""

from __future__ import annotations

from typing import Any

from repro.provers.profile import ProfileError, ProverProfile

# The header every DeepSeek-lineage harness checks with (DeepSeek-Prover-V1.5 prover/utils.py
# LEAN4_DEFAULT_HEADER; Goedel-Prover-V2 lean_compiler/repl_scheduler.py DEFAULT_IMPORTS).
UNLIMITED_HEADER = (
    "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 0\n\nopen BigOperators Real Nat Topology Rat\n\n"
)
# The header of the Kimina-Prover-Preview model cards' example.
KIMINA_HEADER = (
    "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n\n"
)
# What repro used before profiles (repro.config.DEFAULT_HEADER); `custom` keeps it.
REPRO_HEADER = (
    "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n"
)

# What every harness of the DeepSeek lineage checks and samples with: Lean v4.9.0 and the V1.5 Mathlib,
# the unlimited header, a 300 s check (DeepSeek-Prover-V1.5 configs/sampling.py lean_timeout;
# Goedel-Prover-V2 lean_compiler/repl_scheduler.py PROOF_TIMEOUT), T=1.0 and top_p=0.95. Each profile
# below states only what its own harness does differently, so a fact is written once.
_DEEPSEEK_LINEAGE: dict[str, Any] = {
    "toolchain": "v4.9.0",
    "lean_header": UNLIMITED_HEADER,
    "max_heartbeats": 0,
    "check_timeout_s": 300.0,
    "temperature": 1.0,
    "top_p": 0.95,
}

_GOEDEL_SOURCES = (
    "Goedel-LM/Goedel-Prover-V2 src/utils.py (DeepSeekCoTHandler, get_error_str)",
    "Goedel-LM/Goedel-Prover-V2 src/inference.py",
    "Goedel-LM/Goedel-Prover-V2 scripts/pipeline.sh",
    "Goedel-LM/Goedel-Prover-V2 lean_compiler/repl_scheduler.py",
    "Goedel-LM/Goedel-Prover-V2 README.md",
)


def _goedel_v2(size: str) -> ProverProfile:
    return ProverProfile(
        **_DEEPSEEK_LINEAGE,
        name=f"goedel-prover-v2-{size.lower()}",
        title=f"Goedel-Prover-V2-{size} (whole proof with a proof plan; no self-correction round)",
        model=f"Goedel-LM/Goedel-Prover-V2-{size}",
        sources=_GOEDEL_SOURCES,
        user_prompt="prove_goedel_v2",
        # src/utils.py shows `lean4_code.split(":= by")[0] + ":= by sorry"`: the ending on one line
        sorry_layout="inline",
        problem_docstring=True,
        max_tokens=40960,
        max_model_len=40960,
        feedback_style="goedel_v2",
        unsettled=(
            "max_tokens: 40960 is scripts/pipeline.sh's MAX_MODEL_LEN; the README calls the standard mode 32K and"
            " its quick start uses max_new_tokens=32768; which produced the paper's numbers is not stated",
        ),
    )


def _deepseek_v2(size: str, max_model_len: int | None) -> ProverProfile:
    return ProverProfile(
        **_DEEPSEEK_LINEAGE,
        name=f"deepseek-prover-v2-{size.lower()}",
        title=f"DeepSeek-Prover-V2-{size} (chain-of-thought mode)",
        model=f"deepseek-ai/DeepSeek-Prover-V2-{size}",
        sources=(
            "deepseek-ai/DeepSeek-Prover-V2 README.md (5. Quick Start; 2. Model Summary)",
            "Goedel-LM/Goedel-Prover-V2 src/inference.py (how the Goedel harness samples it: T=1.0, top_p=0.95)",
        ),
        user_prompt="prove_deepseek_v2",
        # the README's statement ends `:= by\n  sorry`
        sorry_layout="newline",
        problem_docstring=True,
        max_tokens=8192,
        max_model_len=max_model_len,
        unsettled=(
            "temperature, top_p: the quick start samples with the checkpoint's generation config; 1.0 / 0.95 are"
            " the Goedel harness's values for this model",
            "max_tokens: 8192 is the quick start's; the paper states no evaluation cap",
        ),
    )


# Kimina-Prover-Preview kimina_prover_demo/utils.py:208-214: the last ```lean4 block holding all four is the proof
KIMINA_BLOCK_WORDS = ("theorem", "by", ":=", "import")

_KIMINA_UNSETTLED = (
    "toolchain: the released solutions' lean-toolchain is v4.15.0, but the paper says it used the Lean 4 version"
    " of DeepSeek-Prover-V1.5 (v4.9)",
    "check_timeout_s: 60 is from a demo of a later model (Kimina-Prover-Distill-1.7B, error_fix.py)",
)


def _kimina_preview(size: str, *, paper: bool = False) -> ProverProfile:
    """The model card's settings, or (``paper``) those the paper's numbers were produced with."""
    if paper:
        settings: dict[str, Any] = {
            "name": f"kimina-prover-preview-distill-{size.lower()}-paper",
            "title": f"Kimina-Prover-Preview-Distill-{size} with the paper's settings (32K context, maxHeartbeats 0)",
            "lean_header": UNLIMITED_HEADER,
            "max_heartbeats": 0,
            # "Evaluations utilize a 32K token context length": the answer may take what the prompt leaves
            "max_tokens": 32768,
            "settings_source": "paper (Kimina_Prover_Preview.pdf §3.1) and its released solutions",
            "unsettled": (
                *_KIMINA_UNSETTLED,
                "temperature, top_p: the paper does not state them; these are the model card's",
            ),
        }
    else:
        settings = {
            "name": f"kimina-prover-preview-distill-{size.lower()}",
            "title": f"Kimina-Prover-Preview-Distill-{size} (think block, then the proof; model card settings)",
            "lean_header": KIMINA_HEADER,
            "max_heartbeats": 400000,
            "max_tokens": 8096,
            "settings_source": "model card (vLLM example); the paper's numbers used 32K and maxHeartbeats 0",
            "unsettled": _KIMINA_UNSETTLED,
        }
    sources: tuple[str, ...] = (
        "Goedel-LM/Goedel-Prover-V2 src/utils.py (KiminaCoTHandler: system message, prompt, ':= by')",
        "MoonshotAI/Kimina-Prover-Preview README.md (32K context for training and inference)",
        "MoonshotAI/Kimina-Prover-Preview kimina_prover_demo/error_fix.py (Lean check timeout=60)",
        "MoonshotAI/Kimina-Prover-Preview kimina_prover_demo/utils.py (extract_proof_from_text: the block taken)",
        "huggingface.co/AI-MO/Kimina-Prover-Preview-Distill-7B model card (T=0.6, top_p=0.95, max_tokens=8096)",
    )
    if paper:
        sources += (
            "MoonshotAI/Kimina-Prover-Preview Kimina_Prover_Preview.pdf §3.1 (32K token context for evaluation)",
            "MoonshotAI/Kimina-Prover-Preview minif2f_test_solved.zip (maxHeartbeats 0, Lean v4.15.0)",
        )
    return ProverProfile(
        **settings,
        model=f"AI-MO/Kimina-Prover-Preview-Distill-{size}",
        sources=sources,
        toolchain="v4.15.0",
        check_timeout_s=60.0,
        system_prompt="prove_kimina_system",
        user_prompt="prove_kimina",
        statement_form="by",
        temperature=0.6,
        top_p=0.95,
        max_model_len=32768,
        think_block=True,
        block_words=KIMINA_BLOCK_WORDS,
    )


_DEEPSEEK_V15 = ProverProfile(
    **_DEEPSEEK_LINEAGE,
    name="deepseek-prover-v1.5-rl",
    title="DeepSeek-Prover-V1.5-RL (whole-proof completion, CoT comments)",
    model="deepseek-ai/DeepSeek-Prover-V1.5-RL",
    sources=(
        "deepseek-ai/DeepSeek-Prover-V1.5 prover/utils.py (cot_prompt, LEAN4_DEFAULT_HEADER, post_process_output)",
        "deepseek-ai/DeepSeek-Prover-V1.5 configs/sampling.py (mode cot, T=1, top_p=0.95, max_tokens=2048, "
        "lean_timeout=300)",
        "deepseek-ai/DeepSeek-Prover-V1.5 datasets/minif2f.jsonl (statements end ':= by')",
    ),
    prompt_format="completion",
    user_prompt="prove_deepseek_v15",
    statement_form="by",
    # cot_prompt: `{header}{informal_prefix}{formal_statement}`, the prefix being the problem's doc comment
    problem_docstring=True,
    max_tokens=2048,
    max_model_len=4096,
    output_mode="continuation",
    unsettled=("max_model_len: 4096 is the checkpoint's own context; the harness starts vLLM without one",),
)

_CUSTOM = ProverProfile(
    name="custom",
    title="custom: repro's own prompt (prompts/prove.md) and settings; set every value in the config",
    model=None,
    sources=("repro prompts/prove.md", "repro repro/config.py (DEFAULT_HEADER, lean.timeout_s)"),
    toolchain="v4.15.0",
    lean_header=REPRO_HEADER,
    max_heartbeats=400000,
    check_timeout_s=120.0,
    user_prompt="prove",
    temperature=1.0,
    top_p=0.95,
    max_tokens=8192,
    max_model_len=None,
    legacy_prompt=True,
    # no harness to follow: these are left to the server (`repro doctor` says what it would apply)
    top_k=None,
    min_p=None,
    repetition_penalty=None,
    presence_penalty=None,
    frequency_penalty=None,
)

_PROFILES: dict[str, ProverProfile] = {
    profile.name: profile
    for profile in (
        _goedel_v2("8B"),
        _goedel_v2("32B"),
        _deepseek_v2("7B", 32768),
        _deepseek_v2("671B", None),
        _kimina_preview("7B"),
        _kimina_preview("1.5B"),
        _kimina_preview("7B", paper=True),
        _kimina_preview("1.5B", paper=True),
        _DEEPSEEK_V15,
        _CUSTOM,
    )
}


def list_profiles() -> list[ProverProfile]:
    """Every registered profile, in registration order (`custom` last)."""
    return list(_PROFILES.values())


def get_profile(name: str) -> ProverProfile:
    """The profile named ``name`` (case-insensitive), or :class:`ProfileError` listing the known names."""
    profile = _PROFILES.get(name.strip().lower())
    if profile is None:
        raise ProfileError(f"unknown prover profile {name!r}; known: {', '.join(_PROFILES)}")
    return profile


def profile_for_model(model: str) -> ProverProfile | None:
    """The profile whose harness loads ``model`` (its Hugging Face id, or a path ending in its name)."""
    wanted = model.strip().rstrip("/").lower()
    for profile in _PROFILES.values():
        if profile.model is None:
            continue
        known = profile.model.lower()
        if wanted == known or wanted.endswith("/" + known.split("/")[-1]):
            return profile
    return None
