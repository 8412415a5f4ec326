"""The site's background work: the queue of submissions, and the ladder over the active pool.

A version goes through (:mod:`referee.site.store` has the states):

1. **received**: unpacked into its own folder by the upload (:func:`referee.site.api.receive_version`).
2. **building**: its manifest's ``build`` runs once in its folder, in the bot's sandbox, as a league's
   build does (:func:`referee.runtime.build.run_build` with the bot's limits; the build cache of
   :mod:`referee.league.buildcache`, so a restart does not build a built version again). The site's
   database, uploads, league folder and config are hidden from it (``protect_paths``).
3. **checking**: ``check-bot`` (:func:`referee.checkbot.check_bot`) in the same sandbox, on the
   league's variants. A failure of 2 or 3 is ``failed``, with the log and the fix check-bot gives.
4. **candidate**: it plays a gauntlet against the active pool (a league night of its own in
   ``DATA/gauntlets/vID``: ``[schedule] kind = "gauntlet"`` with the candidate as the challenger and
   ``site.gauntlet_tables`` tables per size; :func:`referee.league.runner.run_league`, resumable).
5. Then, with ``promote = "sprt"``: an entrant's first version becomes **active** at once; a later one
   plays an SPRT duel against the entrant's active version (:class:`referee.league.duel.Duel`, the
   bounds of ``site.sprt``, at most ``site.duel_games`` games, logs in ``DATA/duels/vID/games``; on
   the cluster when the site has one, as the gauntlet and the ladder) and becomes
   active on H1 (the old one **retired**), else **rejected**. With ``promote = "host"`` it waits as a
   candidate until the host promotes it (:func:`promote`).

The queue runs one version at a time, oldest first; at start, :meth:`Store.resume` puts a step that
a kill cut off back to ``received``, and a candidate whose gauntlet or duel was cut off plays it
again (the gauntlet's ledger resumes where it stopped).

The ladder (:func:`ladder_loop`) plays the pool (house bots and active versions) with
:mod:`referee.league.ladder` in ``DATA/league`` (its ledger, logs, standings and ``report.html``: an
output folder like any night's, for ``referee verify`` and ``referee report``). Its config is
``DATA/pool.toml``, rewritten whenever the pool changes; the ladder reads it again between tables, so
a promoted version joins and the one it replaces is withdrawn (its games stay in the standings:
``keep_withdrawn``). After every table each pool entry's rating is added to its history.

``referee host`` runs all of it (:func:`background`) through :func:`background_thread`: on a trio
loop of its own, in a thread of its own, so that none of it holds up a page or an API call.
"""

from __future__ import annotations

import math
import os
import secrets
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import msgspec
import trio

from referee.errors import UserError
from referee.league.config import League
from referee.runtime.entry import run as trio_run
from referee.site.runtime import SiteRuntime
from referee.site.store import Store, Version

#: what :func:`background_thread` runs (``background``, or a test's stand-in)
Work = Callable[[SiteRuntime], Awaitable[None]]


def promote(store: Store, vid: int, by: str) -> Version:
    """Make version ``vid`` its entrant's active version (the one active before is retired)."""
    v = store.version(vid)
    if v is None:
        raise UserError(f"no version {vid}")
    if v.state == "active":
        return v
    if v.state not in ("candidate", "rejected", "retired"):
        raise UserError(
            f"version {vid} is {v.state}: only a candidate (or a rejected or retired version) can be made active"
        )
    for old in store.versions(entrant=v.entrant, states=("active",)):
        store.move(old.id, "retired", note=f"replaced by {v.bot} ({by})")
    return store.move(vid, "active", note=f"promoted by {by}")


def entry(v: Version, *, build: bool = False) -> dict[str, Any]:
    """A version as a ``[[bots]]`` table of the pool's league config."""
    m = v.manifest or {}
    d: dict[str, Any] = {"name": v.bot, "command": m.get("command"), "cwd": v.folder}
    if m.get("runtime"):
        d["runtime"] = m["runtime"]
    if build and m.get("build"):
        d["build"] = m["build"]
    return d


def say(rt: SiteRuntime, line: str) -> None:
    print(f"referee host: {line}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# build and check


async def unpack_again(rt: SiteRuntime, v: Version) -> Version:
    """Unpack a received version's kept archive into its (fresh) folder."""
    import shutil

    from referee.site.archive import FIX_ARCHIVE, ArchiveError, caps_of, unpack

    dest = rt.site.bots_dir / v.entrant / f"v{v.number}"
    try:
        data = await trio.Path(v.archive).read_bytes()
    except OSError as exc:
        return rt.store.move(v.id, "failed", error=f"its archive is gone ({exc.strerror})", fix="upload it again")
    shutil.rmtree(dest, ignore_errors=True)
    try:
        got = await trio.to_thread.run_sync(unpack, data, dest, caps_of(rt.site.settings))
    except ArchiveError as exc:
        return rt.store.move(v.id, "failed", note="the archive was refused", error=str(exc), fix=FIX_ARCHIVE)
    return rt.store.move(
        v.id,
        "received",
        note=f"unpacked again: {got.files} files, {got.size:,} bytes",
        folder=str(got.root),
        manifest=msgspec.to_builtins(got.manifest),
    )


def _protect(rt: SiteRuntime, folders: list[str]) -> None:
    """What no bot may see: the site's database, uploads, league and work folders, SITE.toml."""
    from referee.runtime.sandbox import protect_paths

    s = rt.site
    secret = [str(s.db_path), str(s.uploads_dir), str(s.league_out), str(s.path), str(s.pool_path)]
    secret += [str(s.data / d) for d in ("work", "gauntlets", "duels")]
    protect_paths(secret=secret, bot_folders=folders)


async def build_and_check(rt: SiteRuntime, v: Version) -> Version:
    """received -> building -> checking -> candidate (or failed)."""
    from referee.checkbot import check_bot
    from referee.league import buildcache
    from referee.runtime.build import BuildStartError, run_build
    from referee.runtime.limits import parse_limits

    store, site = rt.store, rt.site
    if not v.folder or not await trio.Path(v.folder).is_dir() or not v.manifest:
        v = await unpack_again(rt, v)  # the site was killed between keeping the archive and unpacking it
        if v.state == "failed":
            return v
    v = store.move(v.id, "building")
    work = site.data / "work" / f"v{v.id}"
    try:
        league = site.pool_league([entry(v, build=True)], out=work, house=False, fill="repeat")
    except UserError as exc:
        return store.move(
            v.id,
            "failed",
            error=str(exc),
            fix="fix referee.toml (command, build, runtime) and upload again",
        )
    bot = league.bots[-1]
    limits = parse_limits(bot.limits)
    _protect(rt, [bot.cwd])
    log = ""
    if bot.build is not None:
        work.mkdir(parents=True, exist_ok=True)
        # (hashing a folder of up to unpacked_mb: in a thread, off the loop the ladder's games share)
        records = await trio.to_thread.run_sync(buildcache.load_records, work)
        before = await trio.to_thread.run_sync(buildcache.folder_state, bot.cwd)
        if before is not None and buildcache.is_current(records.get(bot.name), bot.build, bot.env, before):
            log = "(built before the site restarted; the build cache says the folder is unchanged)"
        else:
            try:
                result = await run_build(bot.name, bot.build, bot.cwd, env=bot.env, limits=limits)
            except BuildStartError as exc:
                return store.move(
                    v.id,
                    "failed",
                    error=f"the build command {bot.build!r} could not start: {exc}",
                    fix="build = ... in referee.toml must name a program the sandbox has (make, cc, ...)",
                )
            log = result.output
            if not result.ok:
                why = "timed out" if result.timed_out else f"failed with exit status {result.returncode}"
                return store.move(
                    v.id,
                    "failed",
                    build_log=log,
                    error=f"the build {why}",
                    fix="fix the build (it runs in your folder, in the sandbox, without network): its log is above",
                )
            after = await trio.to_thread.run_sync(buildcache.folder_state, bot.cwd)
            if before is not None and after is not None:
                records[bot.name] = buildcache.record_build(bot.build, bot.env, before, after)
                await trio.to_thread.run_sync(buildcache.save_records, work, records)
    v = store.move(v.id, "checking", build_log=log)
    env = bot.env
    if env and not (limits.sandbox and limits.clean_env):
        env = {**os.environ, **env}
    try:
        report = await check_bot(
            bot.command,
            name=bot.name,
            cwd=bot.cwd,
            move_ms=league.clock.move_ms,
            startup_ms=league.clock.startup_ms,
            variants=[var.rules.to_wire() for var in league.variants],
            limits=limits,
            env=env,
            runtime=(v.manifest or {}).get("runtime"),
            data=bot.data,
        )
    except UserError as exc:
        return store.move(v.id, "failed", error=str(exc), fix="fix the command in referee.toml and upload again")
    data = report.to_json()
    if not report.ok:
        failed = report.failed
        first = failed[0] if failed else None
        return store.move(
            v.id,
            "failed",
            check_report=data,
            error=f"check-bot: {first.name}: {first.detail}" if first else "check-bot failed",
            fix=(first.fix if first and first.fix else "run referee check-bot on your bot and fix what it says"),
        )
    return store.move(v.id, "candidate", note="passed check-bot", check_report=data)


# --------------------------------------------------------------------------
# the gauntlet and the duel


def pool_entries(rt: SiteRuntime, leave_out: str | None = None) -> list[dict[str, Any]]:
    return [entry(a) for a in rt.store.active() if a.bot != leave_out]


class GauntletResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A candidate's gauntlet (``Version.gauntlet``): its games and, from the gauntlet's standings,
    its place among ``field + 1`` bots and its figures; or why none was played (``skipped``)."""

    games: int = 0
    out: str | None = None
    place: int | None = None
    field: int | None = None
    win_share: float | None = None
    mu: float | None = None
    sigma: float | None = None
    ordinal: float | None = None
    forfeits: int | None = None
    faults: dict[str, int] | None = None
    skipped: str | None = None


async def gauntlet(rt: SiteRuntime, v: Version) -> dict[str, Any]:
    """The candidate against the active pool; its figures from the gauntlet's standings."""
    from referee.league.outdir import open_night
    from referee.league.runner import run_league
    from referee.league.secret import settle_seed
    from referee.view.night import write_outputs

    site = rt.site
    out = site.data / "gauntlets" / f"v{v.id}"
    bots = [*pool_entries(rt), entry(v)]
    try:
        plain = site.pool_league(bots, out=out)
        # every field bot meets the candidate at least once: enough tables for the smallest size
        smallest = min(s for var in plain.variants for s in var.sizes)
        need = math.ceil((len(plain.bots) - 1) / max(1, smallest - 1))
        tables = min(200, max(site.settings.gauntlet_tables, need))
        schedule = {"kind": "gauntlet", "challengers": [v.bot], "seats_per_bot": tables}
        league = site.pool_league(bots, out=out, schedule=schedule)
    except UserError as exc:
        return msgspec.to_builtins(GauntletResult(skipped=f"no gauntlet: {exc}"))  # type: ignore[no-any-return]
    league, ledger, _ = await trio.to_thread.run_sync(open_night, league)  # (a resumed gauntlet's ledger read)
    try:
        league = settle_seed(league, ledger)
        stats = await run_league(league, ledger, cluster=rt.cluster)
        st = await trio.to_thread.run_sync(write_outputs, out, ledger, league.name)  # (off the site's loop)
    finally:
        ledger.close()
    rows = st["scopes"]["overall"]["bots"]
    row = next((r for r in rows if r["bot"] == v.bot), None)
    result = GauntletResult(games=stats.done, out=str(out))
    if row is not None:
        figures = {k: row[k] for k in ("place", "win_share", "mu", "sigma", "ordinal", "forfeits", "faults")}
        result = msgspec.structs.replace(result, field=len(rows) - 1, **figures)
    return msgspec.to_builtins(result)  # type: ignore[no-any-return]


async def duel(rt: SiteRuntime, v: Version, current: Version) -> dict[str, Any]:
    """An SPRT duel of the candidate (A) against the entrant's active version (B), on the cluster when
    the site has one (as its gauntlets and its ladder), else here; its logs in ``DATA/duels/vID/games``."""
    from referee.league.duel import Duel, DuelSpec, field_seats
    from referee.league.work import Entrant, UnitMaker
    from referee.rules import derive
    from referee.rules.match import MatchFormat

    site = rt.site
    others = pool_entries(rt, leave_out=current.bot)
    out = site.data / "duels" / f"v{v.id}"
    league = site.pool_league([*others, entry(v), entry(current)], out=out, fill="repeat")
    maker = UnitMaker(league)
    index = {b.name: i for i, b in enumerate(league.bots)}
    a, b = maker.entrant(index[v.bot]), maker.entrant(index[current.bot])
    variant = league.variants[0]
    players = min(variant.sizes)
    field = [i for i, bt in enumerate(league.bots) if bt.name not in (v.bot, current.bot)]
    if not field and players > 2:
        field = [a.index]  # no one else in the pool: copies of the candidate fill the other seats
    seats = field_seats([maker.entrant(i).bot for i in field], players - 2, [v.bot, current.bot])
    m = variant.match
    match = (
        None if m.kind == "single" else MatchFormat(kind=m.kind, hands=m.hands, target=m.target, max_hands=m.max_hands)
    )
    log_dir = out / "games"
    log_dir.mkdir(parents=True, exist_ok=True)
    cluster = rt.cluster
    spec = DuelSpec(
        rules=variant.rules,
        players=players,
        a=a.bot,
        b=b.bot,
        field=seats,
        # a secret season's seed is not known here (the ladder's ledger keeps it): a fresh secret one
        seed=derive(league.seed, f"site-duel:{v.id}") % (2**31) if league.seed is not None else secrets.randbits(31),
        max_pairs=max(1, site.settings.duel_games // 2),
        test=site.sprt,
        match=match,
        clock=a.clock,
        policy=variant.policy(players),
        concurrency=max(1, min(league.concurrency, 4) if cluster is None else cluster.slots),
        log_dir=log_dir,
    )
    d = Duel(spec)
    if cluster is None:
        await d.run()
        where = "here"
    else:
        # the league's bot index of every lineup position (the field's copies as field_seats made them)
        positions = [a.index, b.index, *(field[k % len(field)] for k in range(len(seats)))]
        lineup = [Entrant(i, bot, spec.clock) for i, bot in zip(positions, spec.lineup, strict=True)]
        given_up = await cluster.prepare(league, maker, lambda line: say(rt, line))  # builds, start check
        async with cluster.executor(league) as remote:
            await d.run(remote, lineup, given_up=given_up)
        where = cluster.where
    summary = msgspec.to_builtins(d.summary())
    summary["against"] = current.bot
    summary["played_on"] = where
    return dict(summary)


async def trial(rt: SiteRuntime, v: Version) -> Version:
    """A candidate's gauntlet, then its promotion (first version, or the duel's H1), its rejection,
    or (``promote = "host"``) the wait for the host."""
    store, settings = rt.store, rt.site.settings
    if v.gauntlet is None:
        result = await gauntlet(rt, v)
        note = result.get("skipped") or f"gauntlet played: {result.get('games', 0)} games"
        v = store.move(v.id, "candidate", note=note, gauntlet=result)
    if settings.promote == "host":
        if v.duel is None:
            v = store.move(v.id, "candidate", note="waiting for the host to promote it", duel={"waiting": "host"})
        return v
    current = next(iter(store.versions(entrant=v.entrant, states=("active",))), None)
    if current is None:
        return promote(store, v.id, "the site: the entrant's first version to pass")
    summary = await duel(rt, v, current)
    if summary["result"] == "H1":
        store.move(v.id, "candidate", note=f"SPRT duel against {current.bot}: H1", duel=summary)
        return promote(store, v.id, f"the SPRT duel against {current.bot} (H1)")
    return store.move(v.id, "rejected", note=f"SPRT duel against {current.bot}: {summary['result']}", duel=summary)


def next_job(store: Store, host_mode: bool) -> Version | None:
    for v in store.queue():
        if v.state == "received":
            return v
        if v.state == "candidate" and (v.gauntlet is None or (not host_mode and v.duel is None)):
            return v
    return None


async def queue_loop(rt: SiteRuntime) -> None:
    """The queue, one version at a time, oldest first, until cancelled."""
    host_mode = rt.site.settings.promote == "host"
    while True:
        rt.wake = trio.Event()
        v = next_job(rt.store, host_mode)
        if v is None:
            await rt.wake.wait()
            continue
        try:
            if v.state == "received":
                v = await build_and_check(rt, v)
            else:
                v = await trial(rt, v)
        except Exception as exc:  # noqa: BLE001 - one version's trouble must not stop the site
            text = str(exc) if isinstance(exc, UserError) else f"internal error: {type(exc).__name__}: {exc}"
            if not isinstance(exc, UserError):
                traceback.print_exc(file=sys.stderr)
            say(rt, f"version {v.id} ({v.bot}): {text}")
            now = rt.store.version(v.id)
            if now is not None and now.state in ("received", "building", "checking"):
                rt.store.move(v.id, "failed", error=text, fix="see the error; tell the host if it is the site's")
            elif now is not None and now.state == "candidate":
                rt.store.move(v.id, "rejected", note=f"its trial could not be played: {text}")
        say(rt, f"version {v.id} ({v.bot}): {rt.store.version(v.id).state}")  # type: ignore[union-attr]
        rt.pool_changed.set()


# --------------------------------------------------------------------------
# the ladder


#: how often a ladder that cannot play looks at the pool again (besides being told by this process)
POOL_POLL_S = 5.0


def pool_league(rt: SiteRuntime) -> League | None:
    """The pool's league as the ladder will load it, or None while it cannot be played (too few bots)."""
    try:
        return rt.site.pool_league(pool_entries(rt))
    except UserError:
        return None


def record_ratings(rt: SiteRuntime, st: dict[str, Any], bots: list[str]) -> None:
    rows = {r["bot"]: r for r in st["scopes"]["overall"]["bots"]}
    points = {b: (rows[b]["mu"], rows[b]["sigma"], rows[b]["games"]) for b in bots if b in rows}
    if points:
        rt.store.add_ratings(points)


async def ladder_loop(rt: SiteRuntime, tables: int | None = None) -> None:
    """The ladder over the pool until cancelled (``tables``: stop after that many, for tests)."""
    from referee.league.ladder import open_ladder
    from referee.view.night import write_outputs

    site = rt.site
    played = 0
    while tables is None or played < tables:
        rt.pool_changed = trio.Event()
        if pool_league(rt) is None:
            with trio.move_on_after(POOL_POLL_S):  # a promotion by `referee host ... promote` is another process's
                await rt.pool_changed.wait()
            continue
        site.write_pool(pool_entries(rt))
        try:  # (in a thread: it reads the season's whole ledger into its tally)
            ladder = await trio.to_thread.run_sync(
                partial(
                    open_ladder,
                    str(site.pool_path),
                    keep_withdrawn=True,
                    say=lambda line: say(rt, line),
                    cluster=rt.cluster,
                    outputs=write_outputs,
                )
            )
        except UserError as exc:
            say(rt, f"the ladder cannot start: {exc}")
            with trio.move_on_after(30):
                await rt.pool_changed.wait()
            continue
        try:
            await ladder.start()
            while tables is None or played < tables:
                if pool_league(rt) is None:
                    break
                site.write_pool(pool_entries(rt))
                await ladder.reload()

                await ladder.play_table()
                # the standings and the report in a thread: writing them must not stall the site's pages
                # and its API (nothing else uses the ladder's ledger meanwhile)
                st = await trio.to_thread.run_sync(ladder.write_outputs)
                record_ratings(rt, st, [b.name for b in ladder.league.bots])
                played += 1
                if site.settings.ladder_interval > 0:
                    await trio.sleep(site.settings.ladder_interval)
        except Exception as exc:  # noqa: BLE001 - the site goes on; the ladder tries again
            if not isinstance(exc, UserError):
                traceback.print_exc(file=sys.stderr)
            say(rt, f"the ladder stopped: {exc}; it starts again when the pool changes (or in 30 s)")
            with trio.move_on_after(30):
                await rt.pool_changed.wait()
        finally:
            ladder.ledger.close()


async def background(rt: SiteRuntime) -> None:
    """The queue and the ladder, until cancelled."""
    _protect(rt, [])  # before any build, check, gauntlet or table: the site's files hidden from every bot
    queued = rt.store.resume()
    if queued:
        say(rt, f"{len(queued)} submission(s) in the queue")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(queue_loop, rt)
        nursery.start_soon(ladder_loop, rt)


async def background_thread(rt: SiteRuntime, work: Work | None = None) -> None:
    """:func:`background` (or ``work``) on a trio loop of its own in a thread of its own, until cancelled.

    So nothing the queue and the ladder do can stall the pages and the API: the league's engine does
    synchronous work on its loop (each game's ledger row and log, a gauntlet's standings, a bot's
    spawn, the sandbox's one-time probes, the first import of the build, check-bot and league
    modules), and a loaded machine makes seconds of it. The background gets a runtime of its own on
    the same site and cluster, with its own connection to the site's database (WAL: the web's reads
    never wait for it; a write waits at most for one short transaction). ``rt.poke()`` (an upload, a
    promotion) reaches it through its loop's token. Cancelling this cancels the background's loop
    and waits until it has ended (every bot process killed)."""
    bg = SiteRuntime(rt.site, Store.open(rt.site.db_path), rt.cluster)
    run = work or background
    scope = trio.CancelScope()
    lock = threading.Lock()
    token: list[trio.lowlevel.TrioToken] = []
    stopping = [False]

    def soon(fn: Callable[[], object]) -> None:
        try:
            token[0].run_sync_soon(fn)
        except trio.RunFinishedError:
            pass  # the background's loop has ended

    async def main() -> None:
        with lock:
            token.append(trio.lowlevel.current_trio_token())
            if stopping[0]:
                scope.cancel()
        rt.forward = lambda: soon(bg.poke)
        with scope:
            await run(bg)

    def stop() -> None:
        with lock:
            stopping[0] = True
            if token:
                soon(scope.cancel)

    web = trio.lowlevel.current_trio_token()
    ended = trio.Event()
    failed: list[BaseException] = []

    def body() -> None:
        try:
            trio_run(main)
        except BaseException as exc:  # noqa: BLE001 - handed to the web's loop, raised there
            failed.append(exc)
        finally:
            web.run_sync_soon(ended.set)

    thread = threading.Thread(target=body, name="referee-site-background", daemon=True)
    try:
        thread.start()
        try:
            await ended.wait()
        finally:
            if not ended.is_set():  # cancelled (Ctrl-C, SIGTERM): stop the background, wait for its bots
                stop()
                with trio.CancelScope(shield=True):
                    await ended.wait()
    finally:
        rt.forward = None
        bg.store.close()
    if failed:
        raise failed[0]
