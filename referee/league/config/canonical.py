"""The canonical form of a config (what the ledger stores), bringing a stored one to today's form, and diffs."""

from __future__ import annotations

from typing import Any

import msgspec

from .schema import (
    NON_RESULT_KEYS,
    LeagueConfig,
)


def canonical_form(cfg: LeagueConfig) -> dict[str, Any]:
    data = msgspec.to_builtins(cfg)
    if cfg.competition.strict is not True:
        # not given (or false): the canonical form of configs before [competition], so that a night
        # started with require_sandbox and a fixed seed resumes with strict = false
        data.pop("competition", None)
    data = _schedule_canonical(data)
    # a bot without a runtime preset keeps the canonical form it had before presets existed
    data["bots"] = [
        {k: v for k, v in b.items() if k != "runtime" or v is not None} if isinstance(b, dict) else b
        for b in data.get("bots", [])
    ]
    return _drop_non_result(data)


def is_strict(cfg: LeagueConfig) -> bool:
    """Whether the competition preset is on: ``[competition] strict``, or when
    that is not given, ``[limits] require_sandbox = true``."""
    if cfg.competition.strict is not None:
        return cfg.competition.strict
    return (cfg.limits or {}).get("require_sandbox") is True


def _schedule_canonical(data: dict[str, Any]) -> dict[str, Any]:
    """The schedule keys in canonical form: only the keys given, and no ``schedule`` at all
    where nothing is given (a round robin's config, written before schedules existed, keeps
    exactly its old canonical form, so its ledgers still match)."""

    def given(table: Any) -> dict[str, Any] | None:
        if not isinstance(table, dict):
            return None
        out = {k: v for k, v in table.items() if v is not None}
        return out or None

    top = given(data.get("schedule"))
    if top == {"kind": "round-robin"}:
        top = None
    data = {k: v for k, v in data.items() if k != "schedule"}
    if top is not None:
        data["schedule"] = top
    variants = data.get("variants")
    if isinstance(variants, list):
        fixed = []
        for v in variants:
            if isinstance(v, dict) and "schedule" in v:
                own = given(v["schedule"])
                v = {k: x for k, x in v.items() if k != "schedule"}
                if own is not None:
                    v["schedule"] = own
            fixed.append(v)
        data["variants"] = fixed
    return data


def _drop_non_result(data: dict[str, Any]) -> dict[str, Any]:
    data = dict(data)
    for key in NON_RESULT_KEYS:
        head, _, rest = key.partition(".")
        if not rest:
            data.pop(key, None)
        elif isinstance(data.get(head), dict):
            data[head] = {k: v for k, v in data[head].items() if k != rest}
    ordered: dict[str, Any] = _sort_keys(data)
    return ordered


def normalize_stored(stored: dict[str, Any] | None) -> dict[str, Any] | None:
    """A canonical config read from a ledger, in today's canonical form: keys
    added since it was written get their defaults, keys that no longer count
    (:data:`NON_RESULT_KEYS`, e.g. ``name``) are dropped. A stored config that
    does not decode any more is returned without those keys, for the diff."""
    if not isinstance(stored, dict):
        return stored
    try:
        return canonical_form(msgspec.convert(stored, type=LeagueConfig))
    except (msgspec.ValidationError, TypeError, ValueError):
        return _drop_non_result(_schedule_canonical(stored))


def _sort_keys(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _sort_keys(x[k]) for k in sorted(x)}
    if isinstance(x, list):
        return [_sort_keys(v) for v in x]
    return x


def diff_canonical(old: Any, new: Any, path: str = "") -> list[str]:
    """Key-by-key differences between two canonical configs, as readable lines
    (``"bots[1].command: was [...], now [...]"``)."""
    out: list[str] = []
    label = path or "(config)"
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            sub = f"{path}.{k}" if path else k
            if k not in old:
                out.append(f"{sub}: added ({_short(new[k])})")
            elif k not in new:
                out.append(f"{sub}: removed (was {_short(old[k])})")
            else:
                out.extend(diff_canonical(old[k], new[k], sub))
    elif isinstance(old, list) and isinstance(new, list) and all(isinstance(v, dict) for v in old + new):
        for i in range(max(len(old), len(new))):
            sub = f"{path}[{i}]"
            if i >= len(old):
                out.append(f"{sub}: added ({_short(new[i])})")
            elif i >= len(new):
                out.append(f"{sub}: removed (was {_short(old[i])})")
            else:
                out.extend(diff_canonical(old[i], new[i], sub))
    elif old != new:
        out.append(f"{label}: was {_short(old)}, now {_short(new)}")
    return out


def describe_diff(old: Any, new: Any, most: int = 20) -> str:
    """:func:`diff_canonical` for an error message: the lines joined with a
    newline and two spaces of indent, at most ``most`` of them and then
    ``... and N more``."""
    diffs = diff_canonical(old, new)
    more = f"\n  ... and {len(diffs) - most} more" if len(diffs) > most else ""
    return "\n  ".join(diffs[:most]) + more


def _short(x: Any) -> str:
    text = msgspec.json.encode(x).decode()
    return text if len(text) <= 80 else text[:77] + "..."
