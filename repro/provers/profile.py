"""What one prover's own harness does, as one record: prompt, statement form, sampling, parsing, Lean budget.

A prover scores what its harness scores only when it is asked the way it was trained and evaluated: the
same chat roles and wording, the same statement ending (``:= by sorry`` or ``:= by``), the same sampling
budget, and its proof checked under the Lean toolchain and heartbeat budget it was trained on. Each
registered profile (``repro.provers.registry``) cites the harness file every value was read from.
"""

from __future__ import annotations

import re
import string
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from repro.config import StaticLimits
from repro.exit_codes import ReproError
from repro.lean.text import cut_after_block_holding
from repro.llm.protocol import ChatMessage
from repro.prompts import neutralise_control_tokens, prompt_template

StatementForm = Literal["by_sorry", "by"]
# how a `:= by sorry` ending is laid out: as the statement has it, on one line (Goedel-Prover-V2's
# `split(":= by")[0] + ":= by sorry"`), or with `sorry` indented on the next line (DeepSeek-Prover-V2's README)
SorryLayout = Literal["keep", "inline", "newline"]
PromptFormat = Literal["chat", "completion"]
OutputMode = Literal["whole_proof", "continuation"]
FeedbackStyle = Literal["goedel_v2", "generic"]

_TRAILING_SORRY = re.compile(r":=\s*by\s+sorry\s*$")
_TRAILING_BY = re.compile(r":=\s*by\s*$")
# Lines the Kimina harness drops from the statement when it shows it as the "problem" (Goedel-Prover-V2
# src/utils.py, InferenceHandler.clean_code_string).
_HEADER_LINE = re.compile(r"^(import|set_option|open)")


class ProfileError(ReproError, ValueError):
    """An unknown profile name, or a statement a profile cannot put in its form."""


def statement_in_form(statement: str, form: StatementForm, layout: SorryLayout = "keep") -> str:
    """The statement ending as the harness shows it: ``... := by sorry`` or ``... := by``.

    Our statements end ``:= by sorry``; a harness that completes the proof (Kimina, DeepSeek-Prover-V1.5)
    shows ``:= by`` so that the model writes the tactic block. Only the final ``sorry`` is touched: a
    statement that contains ``:= by`` elsewhere (a ``have`` in a binder default) keeps it. ``layout`` puts
    a ``:= by sorry`` ending the way the harness's data lay it out.
    """
    text = statement.strip()
    if form == "by_sorry" and layout != "keep" and _TRAILING_SORRY.search(text):
        return _TRAILING_SORRY.sub(":= by sorry" if layout == "inline" else ":= by\n  sorry", text)
    if form == "by_sorry" and _TRAILING_SORRY.search(text):
        return text  # already in form; keep its own layout (`:= by\n  sorry`)
    if _TRAILING_SORRY.search(text):
        open_form = _TRAILING_SORRY.sub(":= by", text)
    elif _TRAILING_BY.search(text):
        open_form = _TRAILING_BY.sub(":= by", text)
    else:
        raise ProfileError(f"the statement does not end with ':= by sorry' or ':= by': ...{text[-60:]!r}")
    return open_form if form == "by" else open_form + " sorry"


def _code_block(header: str, statement: str) -> str:
    """Header and statement as one Lean file, the way the harnesses' data holds them (blank line between)."""
    head = header.strip("\n")
    return f"{head}\n\n{statement}" if head.strip() else statement


def problem_docstring(problem: str) -> str:
    """The problem as the doc comment the DeepSeek-lineage data put above each theorem: ``/-- TEXT-/`` and a
    newline (DeepSeek-Prover-V1.5 datasets/minif2f.jsonl ``informal_prefix``; Goedel-Prover-V2
    dataset/minif2f.jsonl ``lean4_code``). Lean comments nest, so a ``/-`` or ``-/`` in the text would open or
    close one early and spill the rest of the problem into the code: both are broken with a space."""
    text = problem.strip()
    while "/-" in text or "-/" in text:  # "/-/" and the like: each replacement can make a new pair
        text = text.replace("/-", "/ -").replace("-/", "- /")
    return f"/-- {text}-/\n"


def _strip_header_lines(code: str) -> str:
    return "\n".join(line for line in code.splitlines() if line.strip() and not _HEADER_LINE.match(line))


def _render(name: str, values: dict[str, str]) -> str:
    # A prompt file ends with one newline that is not part of the prompt (editors add it), so a harness
    # prompt that ends without one can still live in a file. The values (our statement, the problem text) are
    # model-written: their chat control strings are broken (repro.prompts.neutralise_control_tokens).
    shown = {key: neutralise_control_tokens(value) for key, value in values.items()}
    return string.Template(prompt_template(name).removesuffix("\n")).substitute(shown)


class ProverProfile(BaseModel):
    """One prover's harness, fixed. Field values come from the harness file named in ``sources``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    title: str
    # the Hugging Face id the harness loads; None for `custom`
    model: str | None = None
    # repository + path of each harness file the values come from
    sources: tuple[str, ...] = ()
    # Lean side: the toolchain (see repro.lean.toolchains) the prover was trained and evaluated on
    toolchain: str
    lean_header: str
    max_heartbeats: int = Field(ge=0)  # 0: unlimited, as Lean reads `set_option maxHeartbeats 0`
    check_timeout_s: float = Field(gt=0)
    # model side
    prompt_format: PromptFormat = "chat"
    system_prompt: str | None = None  # a prompt file name in prompts/, without .md
    user_prompt: str  # a prompt file name in prompts/, without .md
    statement_form: StatementForm = "by_sorry"
    sorry_layout: SorryLayout = "keep"
    # the problem text as a `/-- ... -/` doc comment above the theorem, as the harness's data carry it
    problem_docstring: bool = False
    temperature: float = Field(ge=0.0, le=2.0)
    top_p: float = Field(gt=0.0, le=1.0)
    # The harnesses pass an explicit vLLM SamplingParams: every knob not named is off. Over HTTP an omitted
    # field would take the checkpoint's generation_config.json instead (vLLM >= 0.8), so each profile sends
    # all of them; None (the `custom` profile) leaves a field to the server.
    top_k: int | None = -1
    min_p: float | None = 0.0
    repetition_penalty: float | None = 1.0
    presence_penalty: float | None = 0.0
    frequency_penalty: float | None = 0.0
    max_tokens: int = Field(ge=1)
    # the context window the harness serves the model with (vLLM's max_model_len); None when not stated
    max_model_len: int | None = Field(default=None, ge=1)
    # output parsing: whether the answer follows a <think>...</think> block, the fence that holds the proof,
    # and whether the output is a whole Lean file or the continuation of the prompt's open code block.
    # think_block and code_fence describe the harness and decide nothing: every profile's reply is read the same
    # way (repro.lean.text.blocks.read_output: the last lean4 block, else lean, after the last </think> or of the
    # whole reply when none follows it; cut at the cap: the last closed one). output_mode and block_words decide.
    think_block: bool = False
    code_fence: str = "lean4"
    output_mode: OutputMode = "whole_proof"
    # words the harness's extractor requires of the block it takes: where the block read lacks one, the reply is
    # cut after the last closed ```lean4 block holding them all (Kimina's extract_proof_from_text); none holds
    # them: the block read stands (Goedel's KiminaCoTHandler takes it), never a refusal
    block_words: tuple[str, ...] = ()
    # how Lean feedback is shown to the prover in a repair round
    feedback_style: FeedbackStyle = "generic"
    legacy_prompt: bool = False  # `custom`: the prompt repro used before profiles existed (prompts/prove.md)
    # where the settings come from when the sources disagree ("model card", "paper"), and the fields whose
    # harness value no source settles (each said in `repro provers NAME` and recorded with a run)
    settings_source: str | None = None
    unsettled: tuple[str, ...] = ()

    def sampling(self) -> dict[str, object]:
        """The sampling values a stage's model settings take from this profile unless the config sets them."""
        values: dict[str, object] = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "min_p": self.min_p,
            "repetition_penalty": self.repetition_penalty,
            "presence_penalty": self.presence_penalty,
            "frequency_penalty": self.frequency_penalty,
            "max_tokens": self.max_tokens,
            "prompt_format": self.prompt_format,
        }
        if self.max_model_len is not None:
            values["max_model_len"] = self.max_model_len
        return values

    def code(self, statement: str, header: str, problem: str | None = None) -> str:
        """Header and statement, in this harness's statement form, as they appear in its prompt (with the
        problem as a doc comment above the theorem where the harness's data carry one)."""
        shown = statement_in_form(statement, self.statement_form, self.sorry_layout)
        if self.problem_docstring and problem and problem.strip():
            shown = problem_docstring(problem) + shown
        return _code_block(header, shown)

    def user_text(self, statement: str, header: str, problem: str | None = None) -> str:
        """The user message (or, for completion models, the whole prompt) this harness sends."""
        if self.legacy_prompt:
            return _render_legacy(statement, header)
        code = self.code(statement, header, problem)
        if self.output_mode == "continuation":
            # the harness leaves the code block open after `:= by` and a newline; the model continues it
            code = code + "\n"
        # the Kimina harness shows the problem text; with none, Goedel's copy of it shows the bare statement
        shown_problem = problem.strip() if problem and problem.strip() else _strip_header_lines(code)
        return _render(self.user_prompt, {"code": code, "problem": shown_problem})

    def messages(self, statement: str, header: str, problem: str | None = None) -> list[ChatMessage]:
        messages = []
        if self.system_prompt is not None:
            messages.append(ChatMessage(role="system", content=_render(self.system_prompt, {})))
        messages.append(ChatMessage(role="user", content=self.user_text(statement, header, problem)))
        return messages

    def proof_text(self, statement: str, output: str) -> str:
        """What the soundness gate reads for one model output.

        A whole-proof harness returns a reply with its own code block: the gate picks the block (after any
        ``</think>``) itself. A continuation harness (DeepSeek-Prover-V1.5) returns the tactic block that
        follows the prompt's ``:= by``, cut at the first closing fence (prover/utils.py,
        post_process_output): the checked code is the statement followed by that continuation.
        """
        return self.proof_output(statement, output, "stop")[0]

    def proof_output(self, statement: str, output: str, finish_reason: str) -> tuple[str, str]:
        """:meth:`proof_text` with the finish reason that describes it.

        A continuation cut at its closing fence is complete whatever followed the fence: the harness checks
        it "regardless of why generation stopped" (DeepSeek-Prover-V1.5 prover/workers/search.py), so a model
        that ran on to the token cap after ``` must not be read as truncated (the gate refuses a truncated
        output without running Lean). Without a fence the model's own reason stands.
        """
        if self.output_mode == "whole_proof":
            return self._preferred_block(output, finish_reason)
        fence = output.find("```")
        continuation = output[:fence] if fence >= 0 else output
        finish = "stop" if fence >= 0 else finish_reason
        return f"{statement_in_form(statement, 'by')}\n{continuation.rstrip()}\n", finish

    def _preferred_block(self, output: str, finish_reason: str) -> tuple[str, str]:
        """The reply cut after the block this harness's extractor takes (:attr:`block_words`), if it is not the
        one the gate reads anyway; that block is closed, so the cut reply is complete ("stop"). A reply past
        the screen's caps is left whole: the screen refuses it by name before reading it."""
        limits = StaticLimits()
        if not self.block_words or len(output) > limits.max_reply_chars or output.count("```") > limits.max_fences:
            return output, finish_reason
        cut = cut_after_block_holding(output, self.block_words, finish_reason)
        return (output, finish_reason) if cut is None else (output[:cut], "stop")


def _render_legacy(statement: str, header: str) -> str:
    values = {"header": header.strip(), "statement": statement.strip()}
    return string.Template(prompt_template("prove")).substitute(
        {key: neutralise_control_tokens(value) for key, value in values.items()}
    )
