"""Real Hugging Face tokenizers and causal models, built offline in a few milliseconds, for the model families
repro's provers come from.

The hub is not reachable from CI, and a prover checkpoint is tens of GB. What the in-process backends need
from a checkpoint is its tokenizer (``PreTrainedTokenizerFast``, a byte-level BPE from ``tokenizers``), its chat
template and a causal model that ``AutoModelForCausalLM`` loads and ``generate`` runs. So each family here is a
byte-level BPE trained on a few sentences, with that family's special tokens and a chat template written from
the one its checkpoints publish (``chat_templates/``), and, where torch is installed, a one-layer model of
that family's architecture with random weights. Everything is saved with ``save_pretrained`` to a directory
that ``AutoTokenizer.from_pretrained`` / ``AutoModelForCausalLM.from_pretrained`` load as they would a
downloaded checkpoint: the code under test runs the installed transformers release, whatever it is.

Families (what each imitates):

* ``qwen3``: Qwen3 (Goedel-Prover-V2-8B/32B are Qwen3-8B/32B fine-tunes): ``<|im_start|>``/``<|im_end|>``,
  ``<think>``/``</think>`` as added (non-special) tokens, no BOS; ``Qwen3ForCausalLM``.
* ``qwen2_5``: Qwen2.5 (Kimina-Prover-Preview-Distill was initialised from Qwen2.5-Math-Instruct): the same
  control tokens, a default system turn; ``Qwen2ForCausalLM``.
* ``deepseek``: the DeepSeek-V3 chat format (DeepSeek-Prover-V2) on a Llama-architecture model (DeepSeek-Prover-
  V2-7B and V1.5 are Llama-architecture): ``<｜begin▁of▁sentence｜>`` added by the tokenizer (as
  LlamaTokenizerFast's ``add_bos_token``) *and* written by the template; ``LlamaForCausalLM``.
"""

from __future__ import annotations

import functools
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).with_name("chat_templates")
_CORPUS = [
    "Complete the following Lean 4 code:",
    "theorem add_comm_example (a b : ℕ) : a + b = b + a := by",
    "  omega",
    "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 0\n\nopen BigOperators Real Nat Topology Rat",
    "Before producing the Lean 4 code to formally prove the given theorem, provide a detailed proof plan.",
    "The proof is not correct. Following is the compilation error message, where we use <error></error>.",
    "You are an expert in mathematics and Lean 4. Think about and solve the following problem step by step.",
    "```lean4\nnlinarith [sq_nonneg (a - b)]\n```",
]


@dataclass(frozen=True)
class Family:
    name: str
    template: str  # file in chat_templates/
    architecture: str  # transformers class name
    bos: str | None
    eos: str
    pad: str
    special: tuple[str, ...]  # control tokens (special=True)
    added: tuple[str, ...] = ()  # ordinary added tokens, as Qwen3's <think>
    tokenizer_adds_bos: bool = False


FAMILIES = {
    "qwen3": Family(
        "qwen3",
        "qwen3.jinja",
        "Qwen3ForCausalLM",
        bos=None,
        eos="<|im_end|>",
        pad="<|endoftext|>",
        special=("<|endoftext|>", "<|im_start|>", "<|im_end|>"),
        added=("<think>", "</think>"),
    ),
    "qwen2_5": Family(
        "qwen2_5",
        "qwen2_5.jinja",
        "Qwen2ForCausalLM",
        bos=None,
        eos="<|im_end|>",
        pad="<|endoftext|>",
        special=("<|endoftext|>", "<|im_start|>", "<|im_end|>"),
    ),
    "deepseek": Family(
        "deepseek",
        "deepseek_v3.jinja",
        "LlamaForCausalLM",
        bos="<｜begin▁of▁sentence｜>",
        eos="<｜end▁of▁sentence｜>",
        pad="<｜end▁of▁sentence｜>",
        special=("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>"),
        tokenizer_adds_bos=True,
    ),
}


def chat_template(family: str) -> str:
    return (TEMPLATES / FAMILIES[family].template).read_text(encoding="utf-8")


def build_tokenizer(family: str) -> Any:
    """A ``PreTrainedTokenizerFast`` of ``family`` (byte-level BPE: every string encodes)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    spec = FAMILIES[family]
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=list(spec.special), initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    core.train_from_iterator(_CORPUS, trainer=trainer)
    if spec.added:
        from tokenizers import AddedToken

        core.add_tokens([AddedToken(token, special=False, normalized=False) for token in spec.added])
    if spec.tokenizer_adds_bos and spec.bos is not None:
        bos_id = core.token_to_id(spec.bos)
        core.post_processor = processors.TemplateProcessing(
            single=f"{spec.bos} $A", pair=f"{spec.bos} $A {spec.bos} $B", special_tokens=[(spec.bos, bos_id)]
        )
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=spec.bos,
        eos_token=spec.eos,
        pad_token=spec.pad,
        chat_template=chat_template(family),
    )


def _model_config(family: Family, tokenizer: Any) -> Any:
    import transformers

    config_class = getattr(transformers, family.architecture.replace("ForCausalLM", "Config"))
    ids = {
        "eos_token_id": tokenizer.convert_tokens_to_ids(family.eos),
        "pad_token_id": tokenizer.convert_tokens_to_ids(family.pad),
        "bos_token_id": tokenizer.convert_tokens_to_ids(family.bos) if family.bos else None,
    }
    return config_class(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=16,
        max_position_embeddings=256,
        tie_word_embeddings=True,
        **ids,
    )


@functools.cache
def checkpoint(family: str, *, with_model: bool = False, generation_config: str | None = None) -> Path:
    """A directory that loads like a downloaded checkpoint of ``family``: tokenizer files, and with
    ``with_model`` a one-layer model (needs torch). ``generation_config`` (JSON) is written as the
    checkpoint's ``generation_config.json``, as real checkpoints ship one (Qwen3's sets top_k=20)."""
    spec = FAMILIES[family]
    directory = Path(tempfile.mkdtemp(prefix=f"repro-tiny-{family}-"))
    tokenizer = build_tokenizer(family)
    tokenizer.save_pretrained(directory)
    config = _model_config(spec, tokenizer)
    # config.json decides which tokenizer class AutoTokenizer picks (a qwen2 model type gets Qwen2Tokenizer and
    # its own pre-tokenizer), so every checkpoint carries it, with or without weights, as a real one does
    config.save_pretrained(directory)
    if with_model:
        import torch
        import transformers

        torch.manual_seed(0)
        model = getattr(transformers, spec.architecture)(config)
        model.save_pretrained(directory)
    if generation_config is not None:
        (directory / "generation_config.json").write_text(json.dumps(json.loads(generation_config)))
    return directory
