"""The Lean-text readers in one place: the lexer, a reply's code blocks, and the statement reader.

A prover's reply is read once (:func:`read_output`) into a :class:`ProverOutput` whose code is a
:class:`LeanCode`: tokens, line starts and comment-free forms computed once, then read by the
gate's policy, the failure taxonomy, the statement reader and the answer stage. This package
imports nothing of ours outside :mod:`repro.lean.tables`, so model-side code may use it freely.
"""

from repro.lean.text.blocks import (
    CodeBlock,
    LeanExtraction,
    ProverOutput,
    cut_after_block_holding,
    extract_lean_block,
    fenced_blocks,
    find_special_tokens,
    read_output,
)
from repro.lean.text.budget import StaticTimeout, check_time, time_limit
from repro.lean.text.code import LeanCode, lean_code
from repro.lean.text.lexer import (
    Kind,
    Token,
    identifier_parts,
    is_identifier_rest,
    is_identifier_start,
    lex,
    lex_error,
    lex_from,
    line_column,
    significant,
)
from repro.lean.text.statement import (
    THEOREM_KEYWORDS,
    Statement,
    StatementError,
    depths,
    ends_in_sorry,
    final_proposition,
    normalize,
    read_statement,
    strip_comments,
    top_level_equation,
    without_header,
)

__all__ = [
    "THEOREM_KEYWORDS",
    "CodeBlock",
    "Kind",
    "LeanCode",
    "LeanExtraction",
    "ProverOutput",
    "Statement",
    "StatementError",
    "StaticTimeout",
    "Token",
    "check_time",
    "depths",
    "ends_in_sorry",
    "cut_after_block_holding",
    "extract_lean_block",
    "fenced_blocks",
    "final_proposition",
    "find_special_tokens",
    "identifier_parts",
    "is_identifier_rest",
    "is_identifier_start",
    "lean_code",
    "lex",
    "lex_error",
    "lex_from",
    "line_column",
    "normalize",
    "read_output",
    "read_statement",
    "significant",
    "strip_comments",
    "time_limit",
    "top_level_equation",
    "without_header",
]
