"""The system call filter bubblewrap installs around every Lean process (``bwrap --seccomp FD``).

The sandbox's file system view (:mod:`repro.lean.sandbox`) already hides every host socket it knows of
(``/run``, ``/var/run``, ``$XDG_RUNTIME_DIR``, the host's ``/tmp``, home directories); this filter is the
second wall, for a socket that lies in a path the view must show (a project directory, a toolchain) and for
the doors a file system view cannot close (red team finding R8, issue 27 §3):

- ``socket()`` only for ``AF_INET``, ``AF_INET6`` and ``AF_NETLINK``, which the sandbox's own network
  namespace makes harmless (it has nothing but its own loopback). ``AF_UNIX`` is refused: a UNIX path socket
  is not part of the network namespace, so ``connect()`` would reach any host service whose socket file is
  visible (D-Bus, systemd's ``private`` socket, whose ``systemd-run --user`` starts commands outside the
  sandbox, ``/var/run/docker.sock``). So is every other family, ``AF_VSOCK`` among them (not namespaced: on a
  virtual machine it reaches the hypervisor's services).
- ``socketpair()`` only as ``AF_UNIX``/``SOCK_STREAM`` (Python's ``asyncio`` needs one for its self-pipe): a
  connected stream pair cannot be pointed elsewhere (``connect`` answers ``EISCONN``), a datagram pair can
  (``connect``/``sendto`` with a path), so those are refused.
- ``io_uring_setup``/``_enter``/``_register``: an io_uring submits ``connect`` and file operations that no
  system call filter sees (Docker's default profile refuses them since 2023; libuv falls back without).
- ``keyctl``/``add_key``/``request_key``: the kernel key rings are not namespaced and may hold the user's
  keys (Docker's default profile refuses them too).
- ``ioctl(TIOCSTI)``/``ioctl(TIOCLINUX)``: typing into a terminal the process shares (the sandbox also runs in
  a new session, ``bwrap --new-session``). Only the low 32 bits of the request are compared, as the kernel
  reads them (flatpak's ``flatpak-run.c``, CVE-2019-10063).
- a system call of another ABI (``int 0x80`` on x86-64, x32 numbers) kills the process: the numbers above are
  the native ABI's, and a foreign ABI would get past them (i386 multiplexes sockets through ``socketcall``).

Why assembled here, in classic BPF, rather than with libseccomp: bubblewrap takes the compiled program
itself (``bubblewrap.c`` ``seccomp_program_new``: the bytes read from FD, a multiple of 8, handed to
``prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)``; read at bubblewrap 0.11.1, the same in the 0.8.0 installed
here), the program is some thirty instructions, and libseccomp's own Python bindings ship as a Debian package
(``python3-seccomp``), not on PyPI (only a third party's repackaging is), so they are absent from a virtual
environment and from most GPU nodes; a dependency for thirty instructions is not worth its weight.
The numbers below are the kernel's (``asm/unistd_64.h`` for x86-64,
``asm-generic/unistd.h`` for aarch64, ``linux/audit.h``, ``asm-generic/ioctls.h``); a test checks them against
the headers where they are installed and runs the filter under bubblewrap.
"""

from __future__ import annotations

import platform
import struct
from dataclasses import dataclass

# linux/filter.h (classic BPF)
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_ALU_AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

# linux/seccomp.h
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
EPERM = 1

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6] (little-endian: low word first)
_NR, _ARCH = 0, 4


def _arg_low(index: int) -> int:
    return 16 + 8 * index


AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
SOCK_STREAM, SOCK_TYPE_MASK = 1, 0xF  # the type argument also carries SOCK_NONBLOCK | SOCK_CLOEXEC
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
X32_SYSCALL_BIT = 0x40000000


@dataclass(frozen=True)
class Abi:
    """One architecture's native system call numbers (only those the filter names)."""

    machine: str
    audit_arch: int
    socket: int
    socketpair: int
    ioctl: int
    add_key: int
    request_key: int
    keyctl: int
    io_uring: tuple[int, int, int]
    x32_bit: bool  # x86-64 also accepts x32 numbers (bit 30 set) under its own audit arch


ABIS = {
    "x86_64": Abi("x86_64", 0xC000003E, 41, 53, 16, 248, 249, 250, (425, 426, 427), True),
    "aarch64": Abi("aarch64", 0xC00000B7, 198, 199, 29, 217, 218, 219, (425, 426, 427), False),
}
_MACHINE_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}


def abi_for(machine: str | None = None) -> Abi | None:
    """The ABI of ``machine`` (this one by default), or None where the filter has no numbers for it."""
    name = (machine or platform.machine()).lower()
    return ABIS.get(_MACHINE_ALIASES.get(name, name))


class _Program:
    """Classic BPF with forward jumps to labels, resolved when assembled."""

    def __init__(self) -> None:
        self._lines: list[tuple[int, str | int, str | int, int] | str] = []

    def label(self, name: str) -> None:
        self._lines.append(name)

    def op(self, code: int, k: int, true: str | int = 0, false: str | int = 0) -> None:
        self._lines.append((code, true, false, k))

    def assemble(self) -> bytes:
        at: dict[str, int] = {}
        count = 0
        for line in self._lines:
            if isinstance(line, str):
                at[line] = count
            else:
                count += 1
        out = bytearray()
        index = 0
        for line in self._lines:
            if isinstance(line, str):
                continue
            code, true, false, k = line
            jumps = []
            for target in (true, false):
                offset = target if isinstance(target, int) else at[target] - index - 1
                if not 0 <= offset <= 255:
                    raise ValueError(f"jump from {index} to {target!r} out of range")
                jumps.append(offset)
            out += struct.pack("<HBBI", code, jumps[0], jumps[1], k)
            index += 1
        return bytes(out)


def filter_program(abi: Abi) -> bytes:
    """The filter for ``abi``, as bubblewrap reads it (``struct sock_filter`` records, host byte order)."""
    p = _Program()
    deny = RET_ERRNO | EPERM
    p.op(_LD_W_ABS, _ARCH)
    p.op(_JEQ_K, abi.audit_arch, 0, "kill")
    p.op(_LD_W_ABS, _NR)
    if abi.x32_bit:
        p.op(_JGE_K, X32_SYSCALL_BIT, "kill", 0)
    p.op(_JEQ_K, abi.socket, "socket", 0)
    p.op(_JEQ_K, abi.socketpair, "socketpair", 0)
    p.op(_JEQ_K, abi.ioctl, "ioctl", 0)
    for number in (*abi.io_uring, abi.add_key, abi.request_key, abi.keyctl):
        p.op(_JEQ_K, number, "deny", 0)
    p.op(_RET_K, RET_ALLOW)

    p.label("socket")
    p.op(_LD_W_ABS, _arg_low(0))
    p.op(_JEQ_K, AF_INET, "allow", 0)
    p.op(_JEQ_K, AF_INET6, "allow", 0)
    p.op(_JEQ_K, AF_NETLINK, "allow", "deny")

    p.label("socketpair")
    p.op(_LD_W_ABS, _arg_low(0))
    p.op(_JEQ_K, AF_UNIX, 0, "deny")
    p.op(_LD_W_ABS, _arg_low(1))
    p.op(_ALU_AND_K, SOCK_TYPE_MASK)
    p.op(_JEQ_K, SOCK_STREAM, "allow", "deny")

    p.label("ioctl")
    p.op(_LD_W_ABS, _arg_low(1))
    p.op(_JEQ_K, TIOCSTI, "deny", 0)
    p.op(_JEQ_K, TIOCLINUX, "deny", "allow")

    p.label("allow")
    p.op(_RET_K, RET_ALLOW)
    p.label("deny")
    p.op(_RET_K, deny)
    p.label("kill")
    p.op(_RET_K, RET_KILL_PROCESS)
    return p.assemble()
