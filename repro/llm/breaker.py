"""Stop calling an endpoint that keeps failing.

When an endpoint goes down mid-run, every problem would otherwise burn its retries against it and
be left unfinished one by one. After ``threshold`` consecutive failed calls (each already retried by
the backend) the breaker opens: further calls to that endpoint fail at once, and the run stops
drawing problems and says why. Any success in between resets the count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from repro.llm.protocol import ModelCallError


class EndpointDown(ModelCallError):
    """Raised instead of calling an endpoint whose breaker is open."""


@dataclass
class EndpointBreaker:
    threshold: int = 20
    _consecutive: dict[str, int] = field(default_factory=dict)
    _last_cause: dict[str, str] = field(default_factory=dict)
    tripped: dict[str, str] = field(default_factory=dict)

    def check(self, endpoint: str) -> None:
        if endpoint in self.tripped:
            raise EndpointDown(endpoint, f"not called: {self.tripped[endpoint]}")

    def success(self, endpoint: str) -> None:
        self._consecutive[endpoint] = 0

    def failure(self, endpoint: str, cause: str) -> None:
        count = self._consecutive.get(endpoint, 0) + 1
        self._consecutive[endpoint] = count
        self._last_cause[endpoint] = cause
        if count >= self.threshold and endpoint not in self.tripped:
            self.tripped[endpoint] = f"{count} consecutive calls failed; last: {cause}"

    def reason(self) -> str | None:
        """Why the run must stop, or None while every endpoint is usable."""
        if not self.tripped:
            return None
        return "; ".join(f"{endpoint}: {cause}" for endpoint, cause in self.tripped.items())
