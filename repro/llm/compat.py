"""The releases of the in-process model libraries that repro was checked against, and whether the installed ones are.

Both blockers of the first real run came from a library moving under an unchanged call: transformers 5.0 made
``apply_chat_template(tokenize=True)`` return a ``BatchEncoding``, and vLLM up to 0.8.5.post1 refuses
``top_k=0`` where later releases take it. So the extras pin the ranges checked (``pyproject.toml``, kept equal
to :data:`CHECKED` by a test), and ``repro doctor`` says when an installed release is outside them.

What "checked" means per library:

* transformers: the contract tests (tests/test_local_backends.py) ran against a real ``PreTrainedTokenizerFast``
  and a tiny causal model under 4.51.3 (Goedel-Prover-V2's pin), 4.57.6 and 5.24.0;
* vllm: it does not install without a CUDA build of torch, so the stand-in (tests/doubles/fake_vllm.py) imitates
  0.8.5.post1 (Goedel-Prover-V2's pin) and 0.33.0, whose signatures were transcribed from their wheels
  (tests/fixtures/vllm_signatures.json); the releases between keep the same engine API (``LLM``,
  ``llm_engine.add_request/step/abort_request``, ``SamplingParams``), as read for the model audit.
"""

from __future__ import annotations

from importlib import metadata

from pydantic import BaseModel

CHECKED: dict[str, str] = {
    "transformers": ">=4.51.3,<5.25",
    "vllm": ">=0.8.5,<0.34",
}


class LibraryVersion(BaseModel):
    package: str
    installed: str | None  # None: not installed
    checked: str
    inside: bool | None  # None: not installed

    def describe(self) -> str:
        if self.installed is None:
            return f"not installed (repro was checked against {self.package}{self.checked})"
        if self.inside:
            return f"{self.installed} (inside the checked range {self.checked})"
        return (
            f"{self.installed} is OUTSIDE the range repro was checked against ({self.checked}): the in-process"
            f" backend may fail on every request; install one inside it: pip install '{self.package}{self.checked}'"
        )


def library_version(package: str) -> LibraryVersion:
    """The installed release of ``package`` (one of :data:`CHECKED`) and whether it lies in the checked range."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    checked = CHECKED[package]
    try:
        installed = metadata.version(package)
    except metadata.PackageNotFoundError:
        return LibraryVersion(package=package, installed=None, checked=checked, inside=None)
    # a local build (2.13.0+cpu, 0.8.5.post1+cu124) is the release it was built from
    public = Version(installed).public
    return LibraryVersion(
        package=package, installed=installed, checked=checked, inside=SpecifierSet(checked).contains(public)
    )
