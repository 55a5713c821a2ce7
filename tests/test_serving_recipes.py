"""The serving commands in docs/gpu-node.md start as written on one node of 8 x 80 GB GPUs, as far as the sources
decide it: each server has GPUs of its own, tensor parallelism over exactly those, only flags vLLM takes, and
weights plus one full-context sequence of KV cache within the memory vLLM is given.

No GPU here: this is vLLM's own start-up arithmetic (it refuses to start when the KV cache cannot hold one
sequence of ``--max-model-len``), applied to each checkpoint's published architecture.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.doubles import fake_vllm

DOC = Path(__file__).resolve().parents[1] / "docs" / "gpu-node.md"
GPUS = 8
GPU_BYTES = 79.6 * 2**30  # an 80 GB H100/A100 as CUDA reports it (81,559 MiB)
OVERHEAD_BYTES = 3 * 2**30  # activations, CUDA graphs, the sampler's buffers per GPU (vLLM's profiling run)


@dataclass(frozen=True)
class Checkpoint:
    """bf16 parameters and KV-cache bytes per token (layers x KV heads x head dim x K and V x 2 bytes), from each
    model's published config.json (architecture of its base model)."""

    parameters: float
    kv_bytes_per_token: int


CHECKPOINTS = {
    # Qwen3-32B: 64 layers, 8 KV heads, head dim 128
    "Goedel-LM/Goedel-Prover-V2-32B": Checkpoint(32.8e9, 64 * 8 * 128 * 2 * 2),
    "Goedel-LM/Goedel-Formalizer-V2-32B": Checkpoint(32.8e9, 64 * 8 * 128 * 2 * 2),
    # Qwen3-8B: 36 layers, 8 KV heads, head dim 128
    "Goedel-LM/Goedel-Prover-V2-8B": Checkpoint(8.2e9, 36 * 8 * 128 * 2 * 2),
    # DeepSeek-Prover-V1.5-Base (DeepSeekMath 7B, Llama architecture): 30 layers, 32 KV heads, head dim 128
    "deepseek-ai/DeepSeek-Prover-V2-7B": Checkpoint(6.9e9, 30 * 32 * 128 * 2 * 2),
    # Qwen2.5-7B: 28 layers, 4 KV heads, head dim 128
    "AI-MO/Kimina-Prover-Preview-Distill-7B": Checkpoint(7.6e9, 28 * 4 * 128 * 2 * 2),
}


@dataclass
class Serve:
    command: str
    model: str
    devices: list[int] | None
    flags: dict[str, str] = field(default_factory=dict)

    @property
    def gpus(self) -> int:
        tensor = int(self.flags.get("--tensor-parallel-size", "1"))
        return tensor * int(self.flags.get("--data-parallel-size", "1"))


def serve_commands(text: str) -> list[Serve]:
    """Every `vllm serve` command in the document's bash blocks, continuation lines joined."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.split(" #", 1)[0].strip()
            if "vllm serve" not in line or line.startswith("#"):
                continue
            words = shlex.split(line)
            devices = None
            for word in words:
                if word.startswith("CUDA_VISIBLE_DEVICES="):
                    devices = [int(device) for device in word.split("=", 1)[1].split(",")]
            at = words.index("serve")
            model, rest = words[at + 1], words[at + 2 :]
            flags = {}
            for position, word in enumerate(rest):
                if word.startswith("--"):
                    following = rest[position + 1] if position + 1 < len(rest) else ""
                    flags[word] = "" if following.startswith("--") else following
            commands.append(Serve(line, model, devices, flags))
    return commands


def problems(servers: list[Serve], releases: tuple[str, ...] = fake_vllm.RELEASES) -> list[str]:
    """Why these servers would not all start side by side on one 8-GPU node (empty: they would)."""
    found: list[str] = []
    taken: dict[int, str] = {}
    for server in servers:
        if server.devices is None and (len(servers) > 1 or server.gpus < GPUS):
            found.append(f"{server.model}: no CUDA_VISIBLE_DEVICES, so it starts on GPU 0 beside the others")
        devices = server.devices if server.devices is not None else list(range(GPUS))
        if len(devices) != server.gpus:
            found.append(f"{server.model}: {len(devices)} GPUs given, tensor x data parallel is {server.gpus}")
        for device in devices:
            if device in taken:
                found.append(f"{server.model}: GPU {device} is already {taken[device]}'s")
            taken[device] = server.model
        for release in releases:
            known = set(fake_vllm.transcribed(release)["EngineArgs"])
            frontend = set(fake_vllm.transcribed(release)["serve_frontend_flags"])
            for flag in server.flags:
                if flag not in frontend and flag[2:].replace("-", "_") not in known:
                    found.append(f"{server.model}: vLLM {release} has no {flag}")
        if server.flags.get("--generation-config") != "vllm":
            found.append(f"{server.model}: without --generation-config vllm the checkpoint's sampling defaults apply")
        checkpoint = CHECKPOINTS[server.model]
        tensor = int(server.flags.get("--tensor-parallel-size", "1"))
        context = int(server.flags.get("--max-model-len", "0") or 0)
        if not context:
            found.append(f"{server.model}: no --max-model-len (vLLM would take the model's own, up to 128K)")
            continue
        usable = float(server.flags.get("--gpu-memory-utilization", "0.9")) * GPU_BYTES
        kv_room = tensor * (usable - 2 * checkpoint.parameters / tensor - OVERHEAD_BYTES)
        if kv_room < context * checkpoint.kv_bytes_per_token:
            found.append(
                f"{server.model}: {kv_room / 2**30:.1f} GiB of KV cache left on {tensor} GPU(s), one"
                f" {context}-token sequence needs {context * checkpoint.kv_bytes_per_token / 2**30:.1f} GiB"
            )
    return found


def test_the_documented_serving_commands_start_side_by_side_on_one_node() -> None:
    servers = serve_commands(DOC.read_text(encoding="utf-8"))
    node = [server for server in servers if server.devices is not None]
    assert {server.model for server in node} >= {"Goedel-LM/Goedel-Prover-V2-32B", "Goedel-LM/Goedel-Formalizer-V2-32B"}
    assert problems(node) == []
    data_parallel = [server for server in servers if server.devices is None]
    for server in data_parallel:  # the million-problem recipe: one server over all eight GPUs
        assert problems([server]) == [], server.command


@pytest.mark.parametrize(
    ("commands", "expected"),
    [
        (  # the first round's README: two 32B servers, no GPU placement, the formalizer on one GPU
            "```bash\nvllm serve Goedel-LM/Goedel-Prover-V2-32B --port 8001 --max-model-len 40960"
            " --tensor-parallel-size 4\nvllm serve Goedel-LM/Goedel-Formalizer-V2-32B --port 8002\n```",
            ["no CUDA_VISIBLE_DEVICES", "GPU 0 is already", "no --max-model-len", "--generation-config vllm"],
        ),
        (  # a 32B model alone on one 80 GB GPU with its 40,960-token context: the weights leave too little KV
            "```bash\nCUDA_VISIBLE_DEVICES=0 vllm serve Goedel-LM/Goedel-Prover-V2-32B --max-model-len 40960"
            " --generation-config vllm\n```",
            ["GiB of KV cache left on 1 GPU(s)"],
        ),
        (
            "```bash\nCUDA_VISIBLE_DEVICES=0,1 vllm serve Goedel-LM/Goedel-Prover-V2-8B --max-model-len 40960"
            " --generation-config vllm --max-num-batched-tokenz 8\n```",
            ["2 GPUs given, tensor x data parallel is 1", "has no --max-num-batched-tokenz"],
        ),
    ],
)
def test_commands_that_would_not_start_are_named(commands: str, expected: list[str]) -> None:
    found = " | ".join(problems(serve_commands(commands)))
    for piece in expected:
        assert piece in found, found
