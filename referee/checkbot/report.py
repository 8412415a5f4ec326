"""check-bot's checklist: one :class:`Check` per line, collected in a :class:`Report`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Check:
    """One line of the checklist."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None
    skipped: bool = False  # not run (``detail`` says why); counts neither as passed nor as failed


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    bot_name: str | None = None
    bot_version: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Every check ran and passed."""
        return bool(self.checks) and all(c.ok for c in self.checks)

    def add(self, name: str, ok: bool, detail: str, fix: str | None = None) -> Check:
        check = Check(name, ok, detail, None if ok else fix)
        self.checks.append(check)
        return check

    def skip(self, name: str, why: str) -> Check:
        """Record a check that was not run (``why`` says why)."""
        check = Check(name, False, why, None, skipped=True)
        self.checks.append(check)
        return check

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.ok and not c.skipped]

    @property
    def skipped(self) -> list[Check]:
        return [c for c in self.checks if c.skipped]

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "bot": self.bot_name,
            "version": self.bot_version,
            "seconds": round(self.seconds, 2),
            "checks": [c.__dict__ for c in self.checks],
        }


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 game``, ``2 games`` (``words``: an irregular plural)."""
    return f"{n} {word if n == 1 else (words or word + 's')}"
