"""What a replay reports, and the exception that stops it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ReplayReport:
    header: dict[str, Any]
    footer: dict[str, Any]
    mismatches: list[str] = field(default_factory=list)
    transcript: list[str] = field(default_factory=list)
    actions: int = 0
    hands: int = 0
    faults: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    capped: bool = False

    @property
    def ok(self) -> bool:
        return not self.mismatches


class _Mismatch(Exception):
    """The log differs from the re-simulation (stops the replay)."""
