"""What resolving a config shares: the mistakes found so far, the error for a key path, placeholders, slugs."""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.errors import UserError


def _fill_placeholders(x: str, config_dir: Path) -> str:
    return x.replace("{python}", sys.executable).replace("{config_dir}", str(config_dir))


def _command(cmd: str | list[str], config_dir: Path, where: str) -> str | list[str]:
    if isinstance(cmd, str):
        if not cmd.strip():
            raise UserError(f"{where}: the command is empty")
        return cmd.replace("{python}", shlex.quote(sys.executable)).replace(
            "{config_dir}", shlex.quote(str(config_dir))
        )
    if not cmd or not cmd[0]:
        raise UserError(f'{where}: the command is empty; give an argv list such as ["{{python}}", "bot.py"]')
    return [_fill_placeholders(a, config_dir) for a in cmd]


_SLUG_RE = re.compile(r"[^a-z0-9]+")


def slugify(name: str) -> str:
    return _SLUG_RE.sub("-", name.lower()).strip("-") or "variant"


#: makes the error for a key path (``where``) of the config being resolved
ErrorAt = Callable[[str, str], UserError]


class _Problems:
    """Every mistake of a config, collected so that one run reports them all.

    ``with problems.check(): ...`` records the :class:`UserError` the block
    raises (and goes on); :meth:`raise_if_any` raises one :class:`UserError`:
    the single message as it was, or for several mistakes
    ``"<source>: N mistakes:"`` and one indented line per mistake
    (``"  bots[1].name: ..."``), in the order of the file."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.items: list[str] = []

    @contextmanager
    def check(self) -> Iterator[None]:
        try:
            yield
        except UserError as exc:
            if str(exc) not in self.items:  # a mistake inherited by several variants: said once
                self.items.append(str(exc))

    def raise_if_any(self) -> None:
        if not self.items:
            return
        if len(self.items) == 1:
            raise UserError(self.items[0])
        prefix = f"{self.source}: "
        lines = [m.removeprefix(prefix) for m in self.items]
        raise UserError(f"{self.source}: {len(lines)} mistakes:\n" + "\n".join(f"  {line}" for line in lines))


@dataclass
class _Resolving:
    """What resolving one config needs besides the config: where it comes from,
    and the mistakes found so far (each check records its own and goes on)."""

    source: str  # the config file as named to the user
    config_dir: Path  # relative paths in the config start here
    schedule_only: bool  # skip the checks that depend on this machine
    problems: _Problems = field(init=False)

    def __post_init__(self) -> None:
        self.problems = _Problems(self.source)

    def err(self, where: str, msg: str) -> UserError:
        return UserError(f"{self.source}: {where}: {msg}")

    def check(self) -> Any:
        return self.problems.check()
