"""Frame each REPL command so that only Lean's own reply to it can be read as the answer.

The REPL speaks JSON on its stdout, and LeanInteract takes the text up to the first blank line as the
reply (``lean_interact/server.py``, ``LeanServer._execute_cmd_in_repl``/``run_dict``). Anything else the
REPL process writes to stdout is read the same way: Lean isolates the streams of the thread that
elaborates a command (``IO.FS.withIsolatedStreams``), not of a task the prover's code starts on a thread
of its own, so code Lean runs at elaboration time could print a reply of its own ahead of the real one
(adversary round 4, A2: a forged "no error" and a forged ``#print axioms`` answer).

So every command goes with a trusted sentinel of ours in the same REPL command: the code, a blank line,
then ``#print "<prefix><nonce>_<k>"`` (leanprover/lean4 ``src/Lean/Elab/Print.lean``: ``#print`` of a
string literal logs it as an info message at the keyword). The nonce is fresh per check and never
appears in anything the prover sees before its code runs. A reply is Lean's answer to our command only
if it holds that sentinel exactly once, as an info message at the line we wrote it on, with no message
after it, no other message naming the nonce, and the ``env`` number the worker's next environment must
get (leanprover-community/repl ``REPL/Main.lean``: each command's environment is numbered by the count
of those before it). Anything else raises :class:`FramingError`: the pool reports an infrastructure
``crash``, never a verdict, and kills the worker (its real replies may still be in the pipe). The
Kimina client checks its own sentinels the same way (:mod:`repro.lean.kimina`).

Appending the sentinel after the code shifts none of the code's line numbers. A REPL-level refusal
(``{"message": ...}``, no environment) passes unchanged: it is an error, never a pass.
"""

from __future__ import annotations

import uuid
from typing import Any

FRAME_PREFIX = "repro_frame_"


class FramingError(RuntimeError):
    """A reply that is not Lean's answer to our framed command (printed by something else, or out of step).

    ``deterministic``: the reply is Lean's own, well formed and in step, but a message stands where only our
    sentinel may; the same code on a fresh worker gets the same answer, so it is not retried (lean audit M6).
    """

    def __init__(self, message: str, *, deterministic: bool = False) -> None:
        super().__init__(message)
        self.deterministic = deterministic


def _ends_at(message: dict[str, Any], position: Any) -> bool:
    if not isinstance(position, dict):
        return False
    end = message.get("endPos")
    if not isinstance(end, dict):
        return False
    return end.get("line") == position.get("line") and end.get("column") == position.get("column")


def new_nonce() -> str:
    return uuid.uuid4().hex


def sentinel_text(nonce: str, index: int) -> str:
    return f"{FRAME_PREFIX}{nonce}_{index}"


def frame_command(code: str, sentinel: str) -> tuple[str, int]:
    """``code`` followed by our sentinel on a line of its own; returns the command and the sentinel's line."""
    return f'{code}\n\n#print "{sentinel}"', code.count("\n") + 3


def unframe_reply(reply: Any, *, sentinel: str, line: int, nonce: str, expected_env: int) -> dict[str, Any]:
    """The reply without our sentinel, after checking that Lean wrote it for our command; else raise."""
    if not isinstance(reply, dict):
        raise FramingError(f"the reply is a {type(reply).__name__}, not a JSON object")
    if set(reply) == {"message"}:
        return reply  # the REPL refused the command (no environment): an error, never a pass
    if reply.get("env") != expected_env:
        raise FramingError(f"the reply names environment {reply.get('env')!r}; this worker's next is {expected_env}")
    messages = reply.get("messages") or []
    if not isinstance(messages, list) or not all(isinstance(message, dict) for message in messages):
        raise FramingError("the reply's messages are not a list of objects")
    ours = [message for message in messages if str(message.get("data", "")).strip() == sentinel]
    if len(ours) != 1:
        raise FramingError(f"the reply holds our sentinel {len(ours)} times, not once")
    found = ours[0]
    position = found.get("pos") if isinstance(found.get("pos"), dict) else {}
    if found.get("severity") != "info" or position.get("line") != line:
        raise FramingError(f"our sentinel is not an info message at line {line}")
    rest = [message for message in messages if message is not found]
    for message in rest:
        if nonce in str(message.get("data", "")):
            raise FramingError("a message other than our sentinel names the nonce")
        start = message.get("pos") if isinstance(message.get("pos"), dict) else {}
        if isinstance(start.get("line"), int) and start["line"] >= line:
            # an error whose range ends where our ``#print`` starts is the code's own: Lean's parse error for
            # an unfinished last declaration ("unexpected token '#print'"), placed since leanprover/lean4#2393
            # from the end of the preceding token over the whitespace to the offending token. An error can
            # only reject, so keeping it is safe (lean audit M6)
            if message.get("severity") == "error" and _ends_at(message, position):
                continue
            raise FramingError(
                f"a message stands at line {start['line']}, at or after our sentinel", deterministic=True
            )
    unframed = dict(reply)
    if rest:
        unframed["messages"] = rest
    else:
        unframed.pop("messages", None)
    return unframed
