"""The system call filter bubblewrap installs around Lean processes (``repro/lean/seccomp.py``).

Three checks that can each fail on their own: the numbers the filter names are the kernel's (read from the
kernel headers where they are installed: ``linux-libc-dev``); the program decides what its docstring says,
for both ABIs, run through a small interpreter of classic BPF (aarch64 cannot run here); and under
bubblewrap on this machine the kernel enforces it.
"""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from repro.lean import seccomp
from repro.lean.sandbox import LauncherChanged, SandboxStatus, SandboxUnavailable, confinement, sandboxed

ERRNO_EPERM = seccomp.RET_ERRNO | seccomp.EPERM


def _header(*candidates: str) -> str:
    for candidate in candidates:
        if Path(candidate).is_file():
            return Path(candidate).read_text()
    pytest.skip(f"kernel headers not installed here ({candidates[0]}: apt-get install linux-libc-dev)")


def _numbers(text: str) -> dict[str, int]:
    return {name: int(value) for name, value in re.findall(r"#define __NR3?2?_(\w+)\s+(\d+)\b", text)}


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filters_system_call_numbers_are_the_kernels(machine: str) -> None:
    if machine == "x86_64":
        text = _header("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h")
    else:  # aarch64 uses the generic table
        text = _header("/usr/include/asm-generic/unistd.h")
    numbers = _numbers(text)
    abi = seccomp.abi_for(machine)
    assert abi is not None
    expected = {
        "socket": abi.socket,
        "socketpair": abi.socketpair,
        "ioctl": abi.ioctl,
        "add_key": abi.add_key,
        "request_key": abi.request_key,
        "keyctl": abi.keyctl,
        "io_uring_setup": abi.io_uring[0],
        "io_uring_enter": abi.io_uring[1],
        "io_uring_register": abi.io_uring[2],
    }
    assert {name: numbers.get(name) for name in expected} == expected


def test_the_filters_architecture_and_ioctl_constants_are_the_kernels() -> None:
    audit = _header("/usr/include/linux/audit.h")
    elf = _header("/usr/include/linux/elf-em.h")
    ioctls = _header("/usr/include/asm-generic/ioctls.h")
    machines = dict(re.findall(r"#define (EM_\w+)\s+(\d+)", elf))
    flags = 0x80000000 | 0x40000000  # __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE
    assert "(EM_X86_64|__AUDIT_ARCH_64BIT|__AUDIT_ARCH_LE)" in audit
    assert "(EM_AARCH64|__AUDIT_ARCH_64BIT|__AUDIT_ARCH_LE)" in audit
    assert seccomp.ABIS["x86_64"].audit_arch == int(machines["EM_X86_64"]) | flags
    assert seccomp.ABIS["aarch64"].audit_arch == int(machines["EM_AARCH64"]) | flags
    constants = dict(re.findall(r"#define (TIOC\w+)\s+(0x[0-9A-Fa-f]+)", ioctls))
    assert (int(constants["TIOCSTI"], 16), int(constants["TIOCLINUX"], 16)) == (seccomp.TIOCSTI, seccomp.TIOCLINUX)


def run_filter(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """Classic BPF as the kernel runs a seccomp filter over ``struct seccomp_data`` (only the opcodes a
    filter of ours may use; any other fails the test)."""
    padded = (*args, *([0] * (6 - len(args))))
    data = struct.pack("<iIQ6Q", nr, arch, 0, *padded)
    code = [struct.unpack_from("<HBBI", program, at) for at in range(0, len(program), 8)]
    accumulator, pc = 0, 0
    for _ in range(len(code) + 1):
        op, true, false, k = code[pc]
        if op == 0x20:  # ld [k]
            accumulator = struct.unpack_from("<I", data, k)[0]
        elif op == 0x54:  # and #k
            accumulator &= k
        elif op in (0x15, 0x35):  # jeq / jge #k
            taken = accumulator == k if op == 0x15 else accumulator >= k
            pc += true if taken else false
        elif op == 0x06:  # ret #k
            return k
        else:
            pytest.fail(f"opcode {op:#x} at {pc} is not one the filter may use")
        pc += 1
    pytest.fail("the program ran past its end")


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_refuses_unix_sockets_io_uring_key_rings_and_terminal_injection(machine: str) -> None:
    abi = seccomp.abi_for(machine)
    assert abi is not None
    program = seccomp.filter_program(abi)
    arch = abi.audit_arch

    def decide(nr: int, *args: int) -> int:
        return run_filter(program, nr, arch, args)

    flags = 0o2000000 | 0o4000  # SOCK_CLOEXEC | SOCK_NONBLOCK ride in the type argument
    assert decide(abi.socket, seccomp.AF_UNIX, 1) == ERRNO_EPERM
    assert decide(abi.socket, seccomp.AF_UNIX, 2 | flags) == ERRNO_EPERM
    assert decide(abi.socket, 40, 1) == ERRNO_EPERM  # AF_VSOCK: not namespaced
    assert decide(abi.socket, 0xFFFF_FFFF_0000_0001, 1) == ERRNO_EPERM  # the kernel reads an int: AF_UNIX
    for family in (seccomp.AF_INET, seccomp.AF_INET6, seccomp.AF_NETLINK):
        assert decide(abi.socket, family, 1) == seccomp.RET_ALLOW
    assert decide(abi.socketpair, seccomp.AF_UNIX, 1 | flags) == seccomp.RET_ALLOW  # asyncio's self-pipe
    assert decide(abi.socketpair, seccomp.AF_UNIX, 2) == ERRNO_EPERM  # a datagram pair can sendto a path
    assert decide(abi.socketpair, seccomp.AF_UNIX, 5) == ERRNO_EPERM
    for number in (*abi.io_uring, abi.add_key, abi.request_key, abi.keyctl):
        assert decide(number) == ERRNO_EPERM
    assert decide(abi.ioctl, 0, seccomp.TIOCSTI) == ERRNO_EPERM
    assert decide(abi.ioctl, 0, 0xFFFF_FFFF_0000_0000 | seccomp.TIOCSTI) == ERRNO_EPERM  # CVE-2019-10063's shape
    assert decide(abi.ioctl, 0, seccomp.TIOCLINUX) == ERRNO_EPERM
    assert decide(abi.ioctl, 0, 0x5401) == seccomp.RET_ALLOW  # TCGETS
    for ordinary in (0, 1, 60, 93, 221, 435):  # read, write, exit, ...: whatever their number, let through
        if ordinary not in (abi.socket, abi.socketpair, abi.ioctl, *abi.io_uring, abi.keyctl):
            assert decide(ordinary) == seccomp.RET_ALLOW
    # another ABI's numbers would get past the native ones: the process is killed
    assert run_filter(program, 102, 0x40000003, (1, 0)) == seccomp.RET_KILL_PROCESS  # i386 socketcall
    if abi.x32_bit:
        assert decide(0x40000000 | 41, 1, 1) == seccomp.RET_KILL_PROCESS  # x32 socket


def test_machines_without_numbers_get_no_filter_and_say_so() -> None:
    assert seccomp.abi_for("riscv64") is None
    assert seccomp.abi_for("amd64") == seccomp.ABIS["x86_64"] and seccomp.abi_for("arm64") == seccomp.ABIS["aarch64"]


def _bwrap() -> SandboxStatus:
    try:
        status = confinement("bwrap")
    except SandboxUnavailable as error:
        pytest.skip(f"bubblewrap does not work here: {error}")
    if seccomp.abi_for() is None:
        pytest.skip("no system call filter for this machine")
    assert status.sockets_refused and "UNIX sockets refused" in status.describe()
    return status


KERNEL_SAYS = r"""
import asyncio, ctypes, errno, json, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
found = {}
def attempt(name, call):
    try:
        call()
        found[name] = "ok"
    except OSError as error:
        found[name] = errno.errorcode.get(error.errno, str(error.errno))
attempt("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
attempt("unix_dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).close())
attempt("vsock", lambda: socket.socket(40, socket.SOCK_STREAM).close())
attempt("inet", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
attempt("pair_stream", lambda: [end.close() for end in socket.socketpair()])
attempt("pair_dgram", lambda: [end.close() for end in socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)])
def raw(name, number, *args):
    result = libc.syscall(number, *args)
    found[name] = "ok" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
raw("io_uring_setup", int(sys.argv[1]), 1, 0)
raw("keyctl", int(sys.argv[2]), 0, -3, 0)  # KEYCTL_GET_KEYRING_ID of the session key ring
asyncio.run(asyncio.sleep(0))
found["asyncio"] = "ok"
print(json.dumps(found))
"""


def test_under_bubblewrap_the_kernel_enforces_the_filter(tmp_path: Path) -> None:
    status = _bwrap()
    abi = seccomp.abi_for()
    assert abi is not None
    command = [sys.executable, "-c", KERNEL_SAYS, str(abi.io_uring[0]), str(abi.keyctl)]
    outside = subprocess.run(command, capture_output=True, text=True, timeout=60)
    inside = subprocess.run(sandboxed(command, tmp_path, status), capture_output=True, text=True, timeout=60)
    assert outside.returncode == 0 and inside.returncode == 0, outside.stderr + inside.stderr
    before, after = json.loads(outside.stdout), json.loads(inside.stdout)
    # the control: allowed without the filter (vsock, io_uring, key rings may be missing or refused by the host)
    assert (before["unix"], before["unix_dgram"], before["pair_dgram"]) == ("ok",) * 3, before
    refused = {name: after[name] for name in ("unix", "unix_dgram", "vsock", "pair_dgram", "io_uring_setup", "keyctl")}
    assert refused == dict.fromkeys(refused, "EPERM"), after
    assert (after["inet"], after["pair_stream"], after["asyncio"]) == ("ok", "ok", "ok"), after


def test_a_rewritten_filter_starts_no_sandbox(tmp_path: Path) -> None:
    """The filter is read from a file at every start: it lies outside every writable directory, and a copy
    that changed (something wrote outside the sandbox) stops the next start, in a pool and in a judge step."""
    from types import SimpleNamespace

    from repro.lean import sandbox
    from repro.lean.sandbox import WorkerSandbox

    status = _bwrap()
    lake = tmp_path / "toolchain" / "bin" / "lake"
    lake.parent.mkdir(parents=True)
    lake.write_text('#!/bin/sh\n[ "$1" = env ] && shift\nexec "$@"\n')
    lake.chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    worker_sandbox = WorkerSandbox(status)
    config = SimpleNamespace(lake_path=lake, working_dir=str(project), _cache_repl_dir=None)
    worker_sandbox.prepare(config, str(lake))
    try:
        assert worker_sandbox.syscall_filter is not None
        assert worker_sandbox.syscall_filter.parent == Path(config.lake_path).parent
        worker_sandbox.verify()
        worker_sandbox.syscall_filter.parent.chmod(0o755)
        worker_sandbox.syscall_filter.chmod(0o644)
        worker_sandbox.syscall_filter.write_bytes(struct.pack("<HBBI", 0x06, 0, 0, seccomp.RET_ALLOW))
        with pytest.raises(LauncherChanged, match="system call filter"):
            worker_sandbox.verify()
    finally:
        worker_sandbox.close()

    sandboxed(["true"], tmp_path, status)  # the process-wide copy exists
    path = sandbox._FILTER.path
    assert path is not None and not path.is_relative_to(tmp_path)
    path.parent.chmod(0o755)
    path.chmod(0o644)
    original = path.read_bytes()
    try:
        path.write_bytes(struct.pack("<HBBI", 0x06, 0, 0, seccomp.RET_ALLOW))
        with pytest.raises(LauncherChanged, match="changed since repro wrote it"):
            sandboxed(["true"], tmp_path, status)
    finally:
        path.write_bytes(original)
        path.chmod(0o444)
        path.parent.chmod(0o555)
