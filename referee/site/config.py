"""SITE.toml: a league config (:mod:`referee.league.config`) plus a ``[site]`` table.

Everything but ``[site]`` is a league config, decoded and checked by the league's own loader
(:func:`referee.league.config.decode_config` and :func:`~referee.league.config.resolve`), so its
keys, defaults and error messages are those of ``referee run``. Its ``[[bots]]`` are optional: the
site's *house bots* (a fixed field, e.g. the sample bots), always in the pool; the entrants' active
versions join them (:func:`pool_league`). ``[site]`` (every key optional)::

    [site]
    title = "Spring kwartet league"   # shown on every page
    bind = "127.0.0.1:8000"           # HOST:PORT to listen on (--bind overrides it)
    data = "site-data"                # the site's folder, relative to SITE.toml: site.sqlite, uploads,
                                      # the entrants' bot folders and the league's output (league/)
    upload_mb = 8                     # the largest request body (an upload) in MiB
    unpacked_mb = 64                  # the most an archive may unpack to, in MiB
    max_files = 2000                  # the most files an archive may hold
    max_ratio = 100                   # the largest unpacked/packed size ratio (zip bombs)
    logins_per_minute = 10            # per client address
    uploads_per_hour = 12             # per entrant
    promote = "sprt"                  # "sprt": a candidate replaces its entrant's active version when an SPRT
                                      # duel against it accepts H1; "host": when the host promotes it
    sprt = "0,20,0.05,0.05"           # ELO0,ELO1[,ALPHA,BETA] of that duel (as referee duel --sprt)
    duel_games = 200                  # the most games of that duel (undecided after them: H0)
    gauntlet_tables = 2               # tables a candidate plays against the active pool (per variant and size)
    ladder_interval = 1.0             # seconds between two ladder tables
    cookie_secure = true              # the session cookie's Secure flag (keep it on behind TLS)
    session_hours = 168               # how long a browser login lasts
    trusted_proxies = 0               # behind N proxies of yours: take the client address from X-Forwarded-For

Errors: :class:`referee.errors.UserError` naming the file and the key (``SITE.toml: site.promote:
invalid value 'vote'; expected one of: sprt, host``).
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec
import tomli_w

from referee.errors import UserError
from referee.league.config import League, LeagueConfig, decode_config, resolve
from referee.league.sprt import Sprt, parse_sprt


class SiteSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The ``[site]`` table (see the module docstring for each key)."""

    title: str = "Card referee competition"
    bind: str = "127.0.0.1:8000"
    data: str = "site-data"
    upload_mb: float = 8
    unpacked_mb: float = 64
    max_files: int = 2000
    max_ratio: float = 100
    logins_per_minute: int = 10
    uploads_per_hour: int = 12
    promote: Literal["sprt", "host"] = "sprt"
    sprt: str = "0,20,0.05,0.05"
    duel_games: int = 200
    gauntlet_tables: int = 2
    ladder_interval: float = 1.0
    cookie_secure: bool = True
    session_hours: float = 168
    trusted_proxies: int = 0


#: the league's output folder inside the site's data folder (ledger, game logs, report)
LEAGUE_DIR = "league"
#: the pool's league config the ladder reads (rewritten when the pool changes)
POOL_CONFIG = "pool.toml"
#: the site's own database inside its data folder
DB_NAME = "site.sqlite"

_BIND_RE = re.compile(r"^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.\-]+):(\d{1,5})$")


@dataclass(frozen=True)
class Site:
    """A loaded SITE.toml: where it is, its ``[site]`` settings and its league part."""

    path: Path  # SITE.toml, absolute
    settings: SiteSettings
    league_raw: dict[str, Any]  # the league keys as written (no [site])
    league_cfg: LeagueConfig  # decoded by the league's loader
    sprt: Sprt

    @property
    def data(self) -> Path:
        return (self.path.parent / self.settings.data).resolve()

    @property
    def league_out(self) -> Path:
        return self.data / LEAGUE_DIR

    @property
    def pool_path(self) -> Path:
        return self.data / POOL_CONFIG

    @property
    def db_path(self) -> Path:
        return self.data / DB_NAME

    @property
    def bots_dir(self) -> Path:
        return self.data / "bots"

    @property
    def uploads_dir(self) -> Path:
        return self.data / "uploads"

    @property
    def house_bots(self) -> list[str]:
        return [b.name for b in self.league_cfg.bots]

    def bind(self, override: str | None = None) -> tuple[str, int]:
        return parse_bind(override or self.settings.bind, "--bind" if override else f"{self.path}: site.bind")

    def pool_dict(self, entrants: list[dict[str, Any]], out: Path | None = None, house: bool = True) -> dict[str, Any]:
        """The league config of the pool: SITE.toml's league keys with every path made absolute (so the
        file can live in the data folder), the house bots and then ``entrants`` (``[[bots]]`` tables:
        name, command, cwd absolute, runtime, ...), the output folder ``out`` (default: the league's)."""
        here = self.path.parent
        data = {k: v for k, v in self.league_raw.items()}
        data["out"] = str(out or self.league_out)
        data.setdefault("name", self.path.stem)
        house_bots = []
        for b in self.league_raw.get("bots", []):
            b = _fill_config_dir(dict(b), str(here))
            b["cwd"] = str((here / b["cwd"]).resolve()) if "cwd" in b else str(here)
            if "data" in b:
                b["data"] = [str((here / d).resolve()) for d in b["data"]]
            house_bots.append(b)
        data["bots"] = (house_bots if house else []) + entrants
        return data

    def pool_league(
        self, entrants: list[dict[str, Any]], out: Path | None = None, house: bool = True, **override: Any
    ) -> League:
        """The pool as a resolved :class:`League` (the league loader's checks; :class:`UserError`);
        ``override``: top-level keys replaced (``fill = "repeat"`` to check a pool smaller than a table)."""
        data = {**self.pool_dict(entrants, out, house), **override}
        try:
            cfg = msgspec.convert(data, type=LeagueConfig)
        except msgspec.ValidationError as exc:
            raise UserError(f"{self.path}: the pool's config does not decode: {exc}") from None
        return resolve(cfg, self.pool_path, source=f"{self.pool_path} (the pool of {self.path.name})")

    def write_pool(self, entrants: list[dict[str, Any]]) -> bytes:
        """Write ``DATA/pool.toml`` (the ladder re-reads it between tables); returns its bytes."""
        text = tomli_w.dumps(self.pool_dict(entrants)).encode()
        self.data.mkdir(parents=True, exist_ok=True)
        tmp = self.pool_path.with_suffix(".toml.tmp")
        tmp.write_bytes(text)
        tmp.replace(self.pool_path)
        return text


def _fill_config_dir(x: Any, here: str) -> Any:
    if isinstance(x, str):
        return x.replace("{config_dir}", here)
    if isinstance(x, list):
        return [_fill_config_dir(v, here) for v in x]
    if isinstance(x, dict):
        return {k: _fill_config_dir(v, here) for k, v in x.items()}
    return x


def parse_bind(text: str, where: str) -> tuple[str, int]:
    """``HOST:PORT`` -> (host, port); :class:`UserError` otherwise."""
    m = _BIND_RE.match(text.strip())
    if not m or not 0 < int(m[2]) < 65536:
        raise UserError(f"{where}: expected HOST:PORT such as 127.0.0.1:8000 or [::1]:8000, got {text!r}")
    return m[1].strip("[]"), int(m[2])


def _explain_site(exc: msgspec.ValidationError) -> str:
    text = str(exc)
    m = re.match(r"Object contains unknown field `(\w+)`", text)
    valid = list(SiteSettings.__struct_fields__)
    if m:
        close = difflib.get_close_matches(m[1], valid, n=1, cutoff=0.5)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return f"site: unknown key '{m[1]}'{hint}; valid keys here: {', '.join(valid)}"
    m = re.match(r"Expected `(.+?)`, got `(.+?)` - at `\$\.(\w+)`", text)
    if m:
        return f"site.{m[3]}: expected {m[1]}, got {m[2]}"
    m = re.match(r"Invalid enum value (.+?) - at `\$\.(\w+)`", text)
    if m:
        return f"site.{m[2]}: invalid value {m[1]}; expected one of: sprt, host"
    return f"site: {text}"


def load_site(path: str | Path) -> Site:
    """Read SITE.toml; raise :class:`UserError` on any mistake, naming the file and the key."""
    p = Path(path).resolve()
    source = str(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{source}: no such site file") from None
    except OSError as exc:
        raise UserError(f"{source}: cannot read the site file: {exc.strerror}") from None
    try:
        raw = tomllib.loads(data.decode("utf-8", "replace"))
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{source}: not valid TOML: {exc}") from None
    table = raw.pop("site", {})
    if not isinstance(table, dict):
        raise UserError(f"{source}: site: expected a table ([site]), got {type(table).__name__}")
    try:
        settings = msgspec.convert(table, type=SiteSettings)
    except msgspec.ValidationError as exc:
        raise UserError(f"{source}: {_explain_site(exc)}") from None
    checks = [
        ("upload_mb", settings.upload_mb > 0),
        ("unpacked_mb", settings.unpacked_mb > 0),
        ("max_files", settings.max_files > 0),
        ("max_ratio", settings.max_ratio >= 1),
        ("logins_per_minute", settings.logins_per_minute > 0),
        ("uploads_per_hour", settings.uploads_per_hour > 0),
        ("duel_games", settings.duel_games >= 2),
        ("gauntlet_tables", 1 <= settings.gauntlet_tables <= 200),
        ("ladder_interval", settings.ladder_interval >= 0),
        ("session_hours", settings.session_hours > 0),
        ("trusted_proxies", 0 <= settings.trusted_proxies <= 10),
    ]
    for key, ok in checks:
        if not ok:
            raise UserError(f"{source}: site.{key}: {getattr(settings, key)!r} is out of range (see docs/SITE.md)")
    try:
        sprt = parse_sprt(settings.sprt)
    except ValueError as exc:
        raise UserError(f"{source}: site.sprt: {str(exc).removeprefix('--sprt ')}") from None
    parse_bind(settings.bind, f"{source}: site.bind")
    if "out" in raw:
        raise UserError(f"{source}: out: a site keeps its league in its data folder (site.data); remove 'out'")
    league_cfg = decode_config(tomli_w.dumps(raw).encode(), source)  # the league loader's checks and messages
    if not league_cfg.variants:
        raise UserError(f'{source}: no variants: add at least one [[variants]] table, e.g. name = "kwartet"')
    site = Site(path=p, settings=settings, league_raw=raw, league_cfg=league_cfg, sprt=sprt)
    if league_cfg.bots:
        site.pool_league(
            [], fill="repeat"
        )  # the house bots and variants, checked as a league's now rather than at the first game
    return site
