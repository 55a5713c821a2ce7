"""The judge's tools as they were set up: a seal recorded then, checked before every judgement (red1 R9).

What the judge executes or trusts lies in ``TOOLS_DIR/<toolchain>/``: SafeVerify's checkout (its built
``safe_verify``, lakefile, manifest, and the packages' ``.olean`` files our target and the submission
import), or comparator's binaries and Mathlib workspace. A confined judgement cannot write there (the
sandbox binds it read-only). An unconfined one (``lean.sandbox: unshare``/``none``, the operator's opt-in)
runs prover code as the user, and could leave a tampered tool that every later, confined, judgement
trusts. Two answers:

* **The seal**: when the tools are set up, every file under the directory is recorded by its size, inode,
  modification and *change* times and mode (:func:`seal_tools`). An unprivileged process can set a file's
  modification time back, never its change time (the kernel sets ``st_ctime`` on every write, rename,
  ``chmod`` or ``utime``), so any write, replacement, added or removed file shows. That costs one ``stat``
  per file, not a hash of Mathlib's gigabytes (``benchmarks/judge_tool_seal.py`` measures it), so it is
  checked before each judgement. Where no seal was recorded (tools set up by an older repro, or by hand),
  the first judge records it: trust on first use, as the docs say.
* **No unconfined judgement on tools the user can write** (:func:`writable_path`): a real judge that would
  run prover code unconfined refuses (``unconfined``) unless the tools, and repro's own package (our check
  scripts, the judge's code), are read-only to this user (owned by another one, as a root-built image run
  as a user leaves them), so no judgement can write them at all.

The seal itself is a file of the user's; it protects against a tool changed by something that does not
know to rewrite the seal too, and the refusal against what would.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path

from repro.judge.verdict import JudgeCause

__all__ = ["SEAL_SUFFIX", "check_seal", "seal_path", "seal_tools", "tool_problem", "toolchain_root", "writable_path"]

SEAL_SUFFIX = ".repro-seal.json"
REPRO_PACKAGE = Path(__file__).resolve().parent.parent  # repro/, with repro/judge/lean/*.lean
_SKIPPED = frozenset({".git"})  # git's own files: never executed or read by the judge


def seal_path(home: Path) -> Path:
    """Beside the tools' directory, not in it: the seal is not one of the files it records."""
    return home.with_name(home.name + SEAL_SUFFIX)


def _lines(home: Path) -> list[str]:
    """One line per path under ``home`` (itself included), in a fixed order: its path relative to ``home`` and
    its size, inode, modification and change times and mode. Plain ``os.scandir``: a checkout with Mathlib
    built is tens of thousands of files, walked before every judgement."""
    lines: list[str] = []
    pending = [("", str(home))]
    while pending:
        relative, absolute = pending.pop()
        try:
            with os.scandir(absolute) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name in _SKIPPED:
                continue
            name = f"{relative}/{entry.name}" if relative else entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            lines.append(
                f"{name}\0{info.st_size}\0{info.st_ino}\0{info.st_mtime_ns}\0{info.st_ctime_ns}\0{info.st_mode}"
            )
            if stat.S_ISDIR(info.st_mode):
                pending.append((name, entry.path))
    own = home.lstat()
    lines.append(f".\0{0}\0{own.st_ino}\0{own.st_mtime_ns}\0{own.st_ctime_ns}\0{own.st_mode}")
    lines.sort()
    return lines


def _digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


def seal_tools(home: Path) -> Path:
    """Record the tools under ``home`` as they are now (the setup's last step); returns the seal's path."""
    _CHECKED.pop(str(home), None)
    lines = _lines(home)
    path = seal_path(home)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.partial")  # two first judges at once: each its own
    temporary.write_text(json.dumps({"digest": _digest(lines), "lines": lines}), encoding="utf-8")
    temporary.replace(path)
    return path


def _line(home: Path, name: str) -> str | None:
    try:
        info = (home / name).lstat() if name != "." else home.lstat()
    except OSError:
        return None
    size = info.st_size if name != "." else 0
    return f"{name}\0{size}\0{info.st_ino}\0{info.st_mtime_ns}\0{info.st_ctime_ns}\0{info.st_mode}"


def _quick(name: str) -> bool:
    """What is re-checked before every judgement once the whole tree was, in this process: the directory's own
    entries (lakefiles, manifest) and the built executables (``safe_verify``, comparator, lean4export)."""
    return "/" not in name or "/.lake/build/bin/" in f"/{name}"


# per tools directory: the seal's own identity (its stat) and the lines of the quick paths as sealed, once the
# whole tree was found as sealed in this process. Only a process of this user can change the tools since,
# and no judgement of ours that runs prover code unconfined runs on tools this user can write
_CHECKED: dict[str, tuple[tuple[int, int, int], list[str]]] = {}


def _changed(home: Path, path: Path, now: list[str], recorded: list[str]) -> str:
    differ = sorted({line.split("\0", 1)[0] for line in set(now) ^ set(recorded)})
    return (
        f"the judge's tools at {home} changed since they were set up ({len(differ)} paths written, added or"
        f" removed, first {differ[0] if differ else '?'}): something wrote them, perhaps an unconfined judgement's"
        f" prover code. Set them up again from the pinned commit (then remove {path}, which records them anew)"
    )


def check_seal(home: Path) -> str | None:
    """Why the tools under ``home`` are not as sealed (the first path that changed), or None. No seal yet: the
    tools are sealed now (trust on first use) and pass. The whole tree is walked once per process; after that,
    while the seal is the same file, the directory's own entries and the built executables."""
    path = seal_path(home)
    if not path.is_file():
        # a tools directory this user cannot write: nothing of this user's can change the tools either
        with contextlib.suppress(OSError):
            seal_tools(home)
        return None
    try:
        info = path.stat()
        identity = (info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
        known = _CHECKED.get(str(home))
        if known is not None and known[0] == identity:
            quick_recorded = known[1]
            top = sorted(name for name in os.listdir(home) if name not in _SKIPPED)
            names = [line.split("\0", 1)[0] for line in quick_recorded]
            quick_now = [line for line in (_line(home, name) for name in names) if line is not None]
            if quick_now == quick_recorded and top == sorted(name for name in names if "/" not in name and name != "."):
                return None
            _CHECKED.pop(str(home), None)
            return _changed(home, path, quick_now, quick_recorded)
        sealed = json.loads(path.read_text(encoding="utf-8"))
        recorded, digest = sealed["lines"], sealed["digest"]
        if not isinstance(recorded, list) or digest != _digest(recorded):
            raise ValueError("its digest does not match what it records")
    except (OSError, ValueError, KeyError, TypeError) as error:
        return f"the seal of the judge's tools at {path} cannot be read ({error})"
    now = _lines(home)
    if _digest(now) != digest:
        return _changed(home, path, now, recorded)
    _CHECKED[str(home)] = (identity, [line for line in recorded if _quick(line.split("\0", 1)[0])])
    return None


def writable_path(home: Path) -> Path | None:
    """A path under ``home`` (itself included) that this user could change, or None when none is: owned by this
    user (who may ``chmod`` it), writable by a group of this user's or by anyone, or any path for root."""
    if os.geteuid() == 0:
        return home
    uid, groups = os.geteuid(), set(os.getgroups()) | {os.getegid()}
    for directory, names, files in os.walk(home, followlinks=False):
        names[:] = [name for name in names if name not in _SKIPPED]
        base = Path(directory)
        for path in (base, *(base / name for name in files)):
            try:
                info = path.lstat()
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                continue  # a link's own mode means nothing; what it names is walked where it lies under home
            if info.st_uid == uid or info.st_mode & stat.S_IWOTH:
                return path
            if info.st_mode & stat.S_IWGRP and info.st_gid in groups:
                return path
    return None


def toolchain_root(program: str) -> Path | None:
    """The toolchain directory a resolved ``lake``/``lean`` lies in (``<root>/bin/<program>``), or None (elan's
    shim, or nothing found)."""
    path = Path(program).resolve()
    root = path.parent.parent
    return root if path.parent.name == "bin" and (root / "bin" / "lean").exists() and (root / "lib").is_dir() else None


def tool_problem(
    home: Path, *, real: bool, writes_confined: bool, toolchain: Path | None = None
) -> tuple[JudgeCause, str] | None:
    """Why the tools under ``home`` must not be used for this judgement, or None: changed since they were sealed
    (``sandbox``: a sandbox, earlier, did not hold), or writable by this user while a real judge would run prover
    code unconfined (``unconfined``)."""
    changed = check_seal(home)
    if changed is not None:
        return JudgeCause.sandbox, changed
    if real and not writes_confined:
        # what decides "verified" later: the tools, and repro itself (our check scripts, this very code)
        roots = [("the judge's tools", home), ("repro's own code", REPRO_PACKAGE)]
        if toolchain is not None:
            roots.append(("the Lean toolchain", toolchain))
        for what, root in roots:
            writable = writable_path(root)
            if writable is not None:
                return JudgeCause.unconfined, (
                    f"writes are not confined and this user can change {what} ({writable}): the prover code of"
                    " this judgement could rewrite it for every later judge. Confine the judge (lean.sandbox:"
                    " bwrap), or make it read-only to this user (owned by another, as a root-built image run as"
                    " a user leaves it)"
                )
    return None
