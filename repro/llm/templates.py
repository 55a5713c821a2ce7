"""A chat rendered with the model's own chat template, for endpoints that take a raw prompt.

``prompt_format: completion`` sends ``/v1/completions``, where the server applies no template. A chat
model asked there must see exactly the text its template would produce (roles, BOS, generation prompt),
not our plain ``[user]`` rendering, or it answers off-distribution. The template comes with the
tokenizer (transformers ``apply_chat_template``), loaded once per model.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from repro.llm.protocol import ModelCallError, ModelRequest


@cache
def _tokenizer(model_id: str) -> Any:
    try:
        import transformers
    except ImportError as error:
        raise ModelCallError(
            f"chat template of {model_id}",
            "prompt_format: completion with chat messages needs the model's chat template, which comes with"
            " transformers: pip install 'repro[local]', or use prompt_format: chat",
        ) from error
    try:
        return transformers.AutoTokenizer.from_pretrained(model_id)
    except Exception as error:  # a missing or gated tokenizer: name it, do not guess a template
        raise ModelCallError(
            f"chat template of {model_id}", f"cannot load the tokenizer: {type(error).__name__}: {error}"
        ) from error


def render_chat_template(model_id: str, request: ModelRequest, tokenizer: Any = None) -> str:
    """The request's chat as the model's template renders it, ending with the generation prompt."""
    if request.prompt is not None:
        return request.prompt
    template_owner = tokenizer if tokenizer is not None else _tokenizer(model_id)
    if getattr(template_owner, "chat_template", None) is None:
        raise ModelCallError(
            f"chat template of {model_id}", "the tokenizer has no chat template; give the prompt as raw text"
        )
    rendered: str = template_owner.apply_chat_template(
        [message.model_dump() for message in request.messages or []], tokenize=False, add_generation_prompt=True
    )
    return rendered
