"""Test doubles: stand-ins for what cannot run on a CPU machine without Lean, GPUs or network (a fake Lean
REPL, a fake SafeVerify, fake Kimina and OpenAI servers, a vLLM stand-in). Each names the upstream release
whose behaviour it imitates. Tests and benchmarks import them from here; the product never does."""
