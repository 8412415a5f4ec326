"""The Dask cluster backend: a league night played by the workers of a Dask cluster.

``referee run CONFIG --cluster tcp://HOST:8786`` connects to a running Dask
scheduler (``dask scheduler`` / ``dask worker``, dask-jobqueue,
dask-kubernetes, ...); ``--workers N`` starts a local cluster of N worker
processes (one thread each) on this machine. Needs the ``cluster`` extra
(``pip install 'card-referee[cluster]'``, i.e. ``dask[distributed]``).

The coordinator (the ``referee run`` process) keeps what it keeps locally:
the schedule, the ledger and its lock, progress, standings and report
(:mod:`referee.league.runner`). The workers play units of work
(:class:`referee.league.work.Unit`, at most :data:`UNIT_DEALS` whole deal
sets of one table, so session reuse still pays):

* :class:`Cluster` is the coordinator's connection (a synchronous
  ``distributed.Client``, whose event loop runs in its own thread). Its
  :meth:`Cluster.prepare` runs the builds once per worker host (hosts one
  after the other, so a shared file system is never built twice at once) and
  the start check on every worker; a bot that fails on one worker is reported
  with that worker's address.
* :class:`DaskExecutor` is the :class:`~referee.league.work.Executor`: one
  Dask task per unit (:func:`_play_unit`, on the worker: ``trio.run`` of the
  :class:`~referee.league.local.LocalExecutor` into the run's folder in
  ``OUT/.incoming`` when the worker sees it at the same path, else into a
  temporary folder). The finished games are sent back as Dask events (topic
  per run: each game's :class:`~referee.league.work.GameDone`, with its log
  zstandard compressed unless it was written into the incoming folder, which
  the executor then renames into ``OUT/games``; the games that end within
  :data:`BATCH_S` in one event),
  queued by the client's thread and handed into trio with one wake-up for
  all queued (``run_sync_soon``, then a memory channel per unit); each game is
  committed by the runner in
  its own transaction. The task's return value repeats every game: games
  whose event was not seen are delivered from it when the unit ends, so none
  is lost; the executor delivers each game id once (dask replays a unit whose
  worker died: its games are played again, the replays' results dropped).
* Cancellation (Ctrl-C, or the coordinator gone, whose client the scheduler
  then drops): every unit's future is cancelled; the worker task watches its
  own state every :data:`WATCH_S` and, once the scheduler has released it,
  cancels its trio run, which closes every bot session (the process groups
  killed and reaped). A worker killed outright takes its bots with it (the
  sandbox's lifeline, :mod:`referee.runtime.sandbox`).

Security (docs/CLUSTER.md#security): whoever reaches an unauthenticated
scheduler runs code in the coordinator and on the workers (a bot with network
access can: the scheduler's port is in ``/proc/net/tcp``). ``--workers N``
therefore runs its cluster over TLS with client authentication, with a
certificate made for the run that exists only in memory (:func:`local_security`),
and without a dashboard unless asked; ``--cluster`` needs the client's TLS
files (:func:`cluster_security`: ``--tls-ca-file/--tls-cert/--tls-key`` or
dask's own ``distributed.comm.tls`` configuration) or an explicit ``--insecure``
(a ``warning:`` line). Every certificate and key file named there, and those
of each worker, are hidden from the bots on the workers (:func:`_ensure_ready`).

Errors: :class:`~referee.errors.UserError` for an address that cannot be
reached (within :data:`CONNECT_TIMEOUT_S`), a cluster without workers, a
worker with another referee version, a failing build or start check (naming
the worker; under ``broken_bot = "forfeit"`` that bot forfeits instead), and
for anything that stops the night on a worker (the message starts with the
worker's address).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import pickle
import shutil
import tempfile
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import msgspec
import trio
import zstandard

import referee
from referee.errors import UserError
from referee.league.config import League
from referee.league.outdir import INCOMING, clear_incoming
from referee.league.work import Deliver, GameDone, Unit, UnitMaker
from referee.runtime.entry import run as trio_run
from referee.runtime.gamelog import is_zstd

if TYPE_CHECKING:
    from distributed import Client, Future, LocalCluster

#: seconds to reach the scheduler (and for a first worker to be there) before giving up
CONNECT_TIMEOUT_S = 10.0
#: how often a worker task checks whether the scheduler has cancelled it
WATCH_S = 0.05
#: a worker sends the games that finished within this many seconds in one event (each still
#: committed in its own transaction): fewer messages for the coordinator's Dask client to decode
#: and fewer hand-overs into its trio thread, at a delay of at most this much
BATCH_S = 0.1
#: and at most this many games in one event
BATCH_GAMES = 64
#: at most this many deal sets (every seat rotation of a deal) in one unit of work: large, since
#: games stream back as they end and a unit's bot processes are reused for all its games (a
#: Python bot costs ~0.1 s of CPU to start); a worker that dies replays at most this much
UNIT_DEALS = 64

_EXTRA_HINT = "the cluster backend needs the `cluster` extra: pip install 'card-referee[cluster]' (dask[distributed])"
_CRYPTO_HINT = (
    "--workers: the local cluster's TLS certificate is made with the `cryptography` package, which is not "
    "installed: pip install 'card-referee[cluster]'"
)


def _quiet_dask() -> None:
    """Dask's own log lines (connection retries, worker start-up) stay out of the
    referee's output (the errors that matter reach the coordinator). Set before ``distributed`` is imported,
    and inherited by the worker processes of a local cluster."""
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "critical")
    os.environ.setdefault("DASK_DISTRIBUTED__WORKER__DAEMON", "False")  # bots are child processes of a task


def _import_distributed() -> Any:
    _quiet_dask()
    try:
        import distributed
    except ImportError:
        raise UserError(_EXTRA_HINT) from None
    return distributed


# --------------------------------------------------------------------------
# security


def local_security() -> Any:
    """A ``distributed.Security`` for a local cluster of one run: TLS only
    (``require_encryption``), one self-signed certificate and key made now for
    every role (client, scheduler, worker), so each side must present it
    (client authentication); they exist only in the memory of this process and
    of the worker processes it spawns (handed over through the spawn pipe,
    never a command line or an environment variable), never in a file a bot
    could be given."""
    _import_distributed()
    from distributed.security import Security

    try:
        return Security.temporary()
    except ImportError:
        raise UserError(_CRYPTO_HINT) from None


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """The coordinator's TLS files for ``--cluster`` (None: from dask's configuration)."""

    ca_file: str | None = None
    cert: str | None = None
    key: str | None = None

    def given(self) -> bool:
        return any((self.ca_file, self.cert, self.key))


def cluster_security(address: str, tls: TlsFiles, *, insecure: bool, say: Callable[[str], None]) -> tuple[str, Any]:
    """The scheduler address to connect to and the ``distributed.Security`` for
    it (None with ``insecure``, after a ``warning:`` line through ``say``). The
    TLS files come from ``tls`` (all of ``--tls-ca-file`` and ``--tls-cert``;
    ``--tls-key`` unless the cert file holds the key) or else from dask's
    configuration (``distributed.comm.tls.ca-file`` and
    ``distributed.comm.tls.client.cert``); neither, and not ``insecure``, is a
    :class:`UserError`: nothing is played on a cluster anyone may use."""
    _import_distributed()
    from distributed.security import Security

    addr = address.strip()
    scheme = addr.partition("://")[0] if "://" in addr else ""
    if insecure:
        if tls.given():
            raise UserError("--insecure: give either the TLS files (--tls-ca-file/--tls-cert/--tls-key) or --insecure")
        if scheme == "tls":
            raise UserError(
                f"--cluster {address}: a tls:// scheduler needs --tls-ca-file and --tls-cert, not --insecure"
            )
        say(
            f"warning: --insecure: playing on the unauthenticated scheduler {address}: anyone who can reach it, "
            "a bot with network access included, can run code in this process and on the workers and read "
            "the night's secrets (docs/CLUSTER.md#security)"
        )
        return (addr if scheme else f"tcp://{addr}"), None
    if tls.given():
        for flag, path in (("--tls-ca-file", tls.ca_file), ("--tls-cert", tls.cert)):
            if not path:
                raise UserError(f"{flag}: needed with the other --tls-* options (docs/CLUSTER.md#security)")
        for flag, path in (("--tls-ca-file", tls.ca_file), ("--tls-cert", tls.cert), ("--tls-key", tls.key)):
            if path is not None and not os.path.isfile(path):
                raise UserError(f"{flag} {path}: no such file")
            if path is not None and not os.access(path, os.R_OK):
                raise UserError(f"{flag} {path}: cannot be read")
        security = Security(
            require_encryption=True,
            tls_ca_file=os.path.abspath(str(tls.ca_file)),
            tls_client_cert=os.path.abspath(str(tls.cert)),
            tls_client_key=os.path.abspath(tls.key) if tls.key else None,
        )
    else:
        security = Security()  # dask's configuration (distributed.comm.tls.*), if any
        if not (getattr(security, "tls_ca_file", None) and getattr(security, "tls_client_cert", None)):
            raise UserError(
                f"--cluster {address}: no TLS configuration for the scheduler: an unauthenticated scheduler "
                "lets anyone who reaches it (a bot with network access included) run code in this process "
                "and on the workers; give --tls-ca-file, --tls-cert and --tls-key (or dask's "
                "distributed.comm.tls configuration; docs/CLUSTER.md#security), or --insecure to play on it anyway"
            )
        security.require_encryption = True
    if scheme and scheme != "tls":
        raise UserError(f"--cluster {address}: with TLS the scheduler's address is tls://HOST:PORT")
    return (addr if scheme else f"tls://{addr}"), security


def _key_files(security: Any) -> list[str]:
    """The certificate and key files a ``distributed.Security`` names (not the
    in-memory ones: their text holds a newline)."""
    if security is None:
        return []
    names = ("ca_file", "client_cert", "client_key", "scheduler_cert", "scheduler_key", "worker_cert", "worker_key")
    found = [getattr(security, f"tls_{n}", None) for n in names]
    return [os.path.abspath(p) for p in found if isinstance(p, str) and p and "\n" not in p]


# --------------------------------------------------------------------------
# the coordinator's connection


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    address: str
    host: str
    nthreads: int


class Cluster:
    """A connected Dask client (and the local cluster it started, if any). Use
    :meth:`connect` or :meth:`start_local`, then :meth:`close` (or ``with``)."""

    def __init__(
        self,
        client: Client,
        where: str,
        local: LocalCluster | None = None,
        scratch: str | None = None,
        *,
        send_logs: bool = False,
        security: Any = None,
    ) -> None:
        self.client = client
        self.where = where
        self.local = local
        #: the connection's ``distributed.Security`` (None: an insecure cluster)
        self.security = security
        #: the local cluster's dashboard, when asked for
        self.dashboard: str | None = None
        #: workers send every log over the network, even those that can write into the output folder
        self.send_logs = send_logs
        self._scratch = scratch

    @classmethod
    def connect(
        cls, address: str, timeout: float = CONNECT_TIMEOUT_S, *, send_logs: bool = False, security: Any = None
    ) -> Cluster:
        """Connect to the scheduler at ``address`` (``tcp://HOST:PORT``, or
        ``tls://HOST:PORT`` with ``security``, a ``distributed.Security``: see
        :func:`cluster_security`; a bare ``HOST:PORT`` is taken as tcp, or tls with
        ``security``) and wait for a first worker. Raises :class:`UserError` if it
        cannot be reached or has no worker within ``timeout``."""
        distributed = _import_distributed()
        addr = address.strip()
        if "://" not in addr:
            addr = f"{'tls' if security is not None else 'tcp'}://{addr}"
        rest = addr.partition("://")[2]
        host, _, port = rest.rpartition(":")
        if not host or not port.isdigit():
            raise UserError(
                f"--cluster {address!r}: give the scheduler's address as tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786)"
            )
        try:
            client = distributed.Client(addr, timeout=timeout, set_as_default=False, security=security)
        except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, ValueError from the comm layer
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise UserError(
                f"--cluster {address}: cannot reach a Dask scheduler there within {timeout:g} s "
                f"({text}); start one with `dask scheduler` (and workers with "
                "`dask worker ADDRESS`), or check the address"
            ) from None
        self = cls(client, addr, send_logs=send_logs, security=security)
        try:
            client.wait_for_workers(1, timeout=timeout)
        except Exception:  # noqa: BLE001 - a timeout, or the scheduler gone meanwhile
            self.close()
            raise UserError(
                f"--cluster {address}: the scheduler has no workers (waited {timeout:g} s); start "
                f"some with `dask worker {addr} --nthreads 1`"
            ) from None
        return self

    @classmethod
    def start_local(cls, n_workers: int, *, send_logs: bool = False, dashboard: bool = False) -> Cluster:
        """A local cluster of ``n_workers`` worker processes, one thread each,
        their scratch space in a temporary folder (private to this user), on
        127.0.0.1 over TLS with client authentication (:func:`local_security`:
        a bot that finds its ports gets nothing without the run's certificate);
        a dashboard (on a free port of 127.0.0.1, :attr:`dashboard`) only with
        ``dashboard``."""
        distributed = _import_distributed()
        if n_workers < 1:
            raise UserError("--workers must be at least 1")
        if dashboard:
            try:
                import bokeh  # noqa: F401 - dask's dashboard needs it
            except ImportError:
                raise UserError("--dashboard: Dask's dashboard needs bokeh: pip install 'bokeh>=3.1'") from None
        import dask

        security = local_security()
        scratch = tempfile.mkdtemp(prefix="referee-dask-")
        # the scheduler and every worker also listen for HTTP (plain, unauthenticated: cluster and
        # worker pages, logs, metrics) even without a dashboard: without one, those serve nothing
        http: dict[str, list[str]] = (
            {} if dashboard else {"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []}
        )
        try:
            with dask.config.set(http):  # the nannies keep this configuration for their worker processes
                local = distributed.LocalCluster(
                    n_workers=n_workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    protocol="tls://",
                    security=security,
                    dashboard_address="127.0.0.1:0" if dashboard else None,
                    local_directory=scratch,
                )
            client = distributed.Client(local, set_as_default=False, security=security)
        except Exception as exc:  # noqa: BLE001 - whatever stops dask from starting
            shutil.rmtree(scratch, ignore_errors=True)
            raise UserError(f"--workers {n_workers}: the local Dask cluster did not start ({exc})") from None
        where = f"{n_workers} local worker{'s' if n_workers != 1 else ''}"
        self = cls(client, where, local, scratch, send_logs=send_logs, security=security)
        if dashboard:
            self.dashboard = str(client.dashboard_link)
        return self

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Disconnect (and stop the local cluster). Never raises."""
        with suppress(Exception):
            self.client.close(timeout=5)  # type: ignore[no-untyped-call]
        if self.local is not None:
            with suppress(Exception):
                self.local.close(timeout=10)
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)

    def workers(self) -> list[WorkerInfo]:
        """The workers now, in address order."""
        info = self.client.scheduler_info(n_workers=-1)["workers"]
        return sorted(
            (WorkerInfo(a, str(w.get("host", a)), int(w.get("nthreads", 1))) for a, w in info.items()),
            key=lambda w: w.address,
        )

    @property
    def slots(self) -> int:
        """Units played at once by default: one per worker thread."""
        return max(1, sum(w.nthreads for w in self.workers()))

    def describe(self) -> str:
        ws = self.workers()
        threads = sum(w.nthreads for w in ws)
        return f"{self.where}: {len(ws)} worker{'s' if len(ws) != 1 else ''}, {threads} thread{'s' if threads != 1 else ''}"  # noqa: E501

    # -- preflight --------------------------------------------------------

    async def prepare(
        self,
        league: League,
        maker: UnitMaker,
        say: Callable[[str], None],
        hellos: dict[int, dict[str, Any]] | None = None,
        rebuild: bool = False,
    ) -> frozenset[int]:
        """Builds once per worker host, then the start check on every worker
        (see the module docstring); ``hellos``, when given, receives each bot's
        ``hello`` (as plain data, from the first worker in address order where it
        passed), by bot index. Returns the bots given up (``broken_bot =
        "forfeit"``: a bot whose process ran but failed its hello on some
        worker is given up everywhere, so every game is played alike); raises
        :class:`UserError` to stop the run, with one line per failure
        (``say`` gets all but the last)."""
        workers = self.workers()
        if not workers:
            raise UserError(f"{self.where}: the cluster has no workers left")
        run = uuid.uuid4().hex[:12]
        setup = _setup(league, run, keys=_key_files(self.security))
        unbuilt = await self._build_per_host(league, run, workers, rebuild)
        futs = [
            self.client.submit(
                _check_on_worker,
                setup,
                [maker.entrant(i) for i in range(len(league.bots))],
                league.faults.max_line,
                key=f"referee-check-{run}-{w.address}",
                workers=[w.address],
                allow_other_workers=False,
                pure=False,
            )
            for w in workers
        ]
        reports: list[_CheckReport] = await self._gather(futs)
        for r in reports:
            if r.version != referee.__version__:
                raise UserError(
                    f"worker {r.address}: runs referee {r.version}, this coordinator {referee.__version__}; "
                    "install the same version on every worker"
                )
            if hellos is not None:
                for i, hello in r.hellos.items():
                    hellos.setdefault(i, hello)
        failures = sorted(((f, r.address) for r in reports for f in r.failures), key=lambda x: (x[0][0], x[1]))
        failures = [(f, a) for f, a in failures if f[0] not in unbuilt]
        for _, text in sorted(unbuilt.items()):
            head, sep, tail = text.partition("; last lines of its output:")
            say(f"warning: {head}; it forfeits its games (the referee's fallback plays its seats){sep}{tail}")
        if not failures:
            return frozenset(unbuilt)
        forfeit = league.faults.broken_bot == "forfeit"
        stop = [(f, a) for f, a in failures if not forfeit]  # forfeit: a program missing altogether too
        if stop:
            for (_, text, _), addr in stop[:-1]:
                say(f"error: worker {addr}: {text}")
            (_, text, _), addr = stop[-1]
            broken = len({f[0] for f, _ in stop})
            hint = (
                ""
                if forfeit
                else '\n  (to play on without a broken bot, its games forfeited, set broken_bot = "forfeit" in [faults])'  # noqa: E501
            )
            raise UserError(
                f"worker {addr}: {text}\n{broken} of {len(league.bots)} bots failed the start check on "
                f"the cluster before the first game; nothing was played or recorded: fix the bots "
                f"(on those workers) and run the same command again{hint}"
            )
        given_up = sorted({f[0] for f, _ in failures})
        for i in given_up:
            addrs = ", ".join(a for f, a in failures if f[0] == i)
            first = next(f[1] for f, _ in failures if f[0] == i).splitlines()[0]
            say(f"warning: {first} (on {addrs}); it forfeits its games (the referee's fallback plays its seats)")
        return frozenset(given_up) | frozenset(unbuilt)

    async def _build_per_host(
        self, league: League, run: str, workers: list[WorkerInfo], rebuild: bool
    ) -> dict[int, str]:
        """The bots' builds, once per worker host; the bots whose build failed (with
        ``broken_bot = "forfeit"``), by index, with what failed where. Raises :class:`UserError` else."""
        unbuilt: dict[int, str] = {}
        if any(b.build is not None for b in league.bots):
            hosts: dict[str, WorkerInfo] = {}
            for w in workers:
                hosts.setdefault(w.host, w)
            for w in hosts.values():  # one host after the other: a shared folder is built once at a time
                fut = self.client.submit(
                    _build_on_worker,
                    league,
                    rebuild,
                    key=f"referee-build-{run}-{w.address}",
                    workers=[w.address],
                    allow_other_workers=False,
                    pure=False,
                )
                (report,) = await self._gather([fut])
                if isinstance(report, dict):  # broken_bot = "forfeit": these bots' builds failed there
                    for i, text in report.items():
                        unbuilt.setdefault(i, f"worker {w.address}: {text}")
                elif report is not None:
                    raise UserError(f"worker {w.address}: {report}")
        return unbuilt

    async def _gather(self, futs: list[Future[Any]]) -> list[Any]:
        """The futures' results, waited for in trio; a worker's exception is
        re-raised (a :class:`UserError` as it is); cancelled on cancellation."""
        out = []
        for fut in futs:
            await _wait(fut)
            out.append(await _outcome(self.client, fut))
        return out

    @asynccontextmanager
    async def executor(self, league: League) -> AsyncIterator[DaskExecutor]:
        """A :class:`DaskExecutor` for one run; on the way out (also on error
        and cancellation) every unit still on the cluster is cancelled.

        Unless :attr:`send_logs`, the run gets a folder ``OUT/.incoming/<run>``
        (those of earlier runs, killed before they removed theirs, are removed:
        the caller holds the night's lock): a worker that sees it at the same
        path (a shared file system, or this machine) writes its games' logs
        there, and the executor renames each into ``OUT/games`` as its game is
        committed; the others send their logs over the network. The folder is
        removed on the way out."""
        run = uuid.uuid4().hex[:12]
        incoming = None if self.send_logs else _incoming_folder(league.out, run)
        games = os.path.join(os.path.abspath(league.out), "games")  # noqa: ASYNC240  abspath reads the cwd, no disk
        ex = DaskExecutor(self.client, _setup(league, run, incoming, keys=_key_files(self.security)), games)
        ex.subscribe()
        try:
            yield ex
        finally:
            ex.close()
            if incoming is not None:
                shutil.rmtree(incoming, ignore_errors=True)
                with suppress(OSError):
                    os.rmdir(os.path.dirname(incoming))  # .incoming itself, when no other run's is left


# --------------------------------------------------------------------------
# the executor


@dataclass
class _Pending:
    """A unit on the cluster: the games not delivered yet, and its channel (events, then ``None`` at the end)."""

    unit: Unit
    remaining: set[str]
    send: trio.MemorySendChannel[dict[str, Any] | None]
    recv: trio.MemoryReceiveChannel[dict[str, Any] | None]
    future: Any = None


@dataclass(frozen=True, slots=True)
class WorkerSetup:
    """What a worker process needs before it plays a run's units (picklable):
    the run's id (also its event topic), the paths hidden from bots, and the
    run's folder in the output folder for logs written in place (None: send
    every log; see :meth:`Cluster.executor`)."""

    run: str
    secret: tuple[str, ...]
    bot_folders: tuple[str, ...]
    incoming: str | None = None

    @property
    def topic(self) -> str:
        return f"referee-games-{self.run}"


def _incoming_folder(out: Path, run: str) -> str | None:
    """Make ``OUT/.incoming/<run>`` (private to this user), first removing what
    earlier runs left there; its absolute path, or None if it cannot be made
    (the workers then send their logs)."""
    clear_incoming(out)
    folder = os.path.join(os.path.abspath(out), INCOMING, run)
    try:
        os.makedirs(folder, mode=0o700)
    except OSError:
        return None
    return folder


def _unit_prefix(key: str) -> str:
    """The name prefix of a unit's folders in the run's incoming folder (one per attempt)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in key) + "-"


def _setup(league: League, run: str, incoming: str | None = None, *, keys: list[str] | None = None) -> WorkerSetup:
    """The run's :class:`WorkerSetup`; ``keys``: the coordinator's TLS files, hidden from the bots too
    (a worker that sees them at the same path)."""
    from referee.runtime.limits import LimitsError, parse_limits
    from referee.runtime.sandbox import bot_folders

    folders: list[str] = []
    for i, bot in enumerate(league.bots):
        try:
            lim = parse_limits(bot.limits)
        except LimitsError as exc:
            raise UserError(f"bots[{i}].limits: {exc}") from None
        folders.extend(bot_folders(bot.command, bot.cwd, named_cwd=not lim.temp_workdir))
    return WorkerSetup(run, (str(league.out), str(league.path), *(keys or [])), tuple(folders), incoming)


@dataclass
class DaskExecutor:
    """Plays units on the cluster (see the module docstring). Made by :meth:`Cluster.executor`."""

    client: Client
    setup: WorkerSetup
    #: the night's log folder (``OUT/games``), where logs written in place are moved
    games: str = ""
    unit_deals: int = UNIT_DEALS
    #: logs delivered so far: written in place by a worker and moved, and sent over the network
    moved: int = 0
    sent: int = 0
    _pending: dict[str, _Pending] = field(default_factory=dict)
    _delivered: set[str] = field(default_factory=set)
    _abandoned: list[Any] = field(default_factory=list)
    _token: trio.lowlevel.TrioToken | None = None
    _count: int = 0
    _inbox: deque[Any] = field(default_factory=deque)
    _unzstd: zstandard.ZstdDecompressor = field(default_factory=zstandard.ZstdDecompressor)

    def subscribe(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self.client.subscribe_topic(self.setup.topic, self._on_event)  # type: ignore[no-untyped-call]

    def close(self) -> None:
        """Cancel every unit still on the cluster (one call) and stop listening."""
        futures = [p.future for p in self._pending.values() if p.future is not None] + self._abandoned
        self._abandoned = []
        with suppress(Exception):  # the scheduler is gone: it has dropped them itself
            if futures:
                self.client.cancel(futures, force=True)  # type: ignore[no-untyped-call]
            self.client.unsubscribe_topic(self.setup.topic)  # type: ignore[no-untyped-call]

    # called in the client's event-loop thread: events are queued, and trio is woken once for all
    # that arrive before it runs (one wake-up, not one per event)
    def _on_event(self, event: tuple[float, Any]) -> None:
        self._inbox.append(event[1])
        if len(self._inbox) == 1:
            self._soon(self._drain)

    def _soon(self, fn: Callable[..., None], *args: Any) -> None:
        token = self._token
        if token is None:
            return
        try:
            token.run_sync_soon(fn, *args)
        except trio.RunFinishedError:
            pass

    # called in trio
    def _drain(self) -> None:
        inbox = self._inbox
        while inbox:
            msg = inbox[0]
            p = self._pending.get(msg.get("unit", "")) if isinstance(msg, dict) else None
            if p is not None:
                p.send.send_nowait(msg)
            inbox.popleft()  # after: an event queued meanwhile finds the inbox not empty and wakes no one

    def _end(self, key: str) -> None:
        p = self._pending.get(key)
        if p is not None:
            p.send.send_nowait(None)

    async def play(self, unit: Unit, deliver: Deliver) -> None:
        """See :meth:`referee.league.work.Executor.play`."""
        self._count += 1
        key = f"referee-unit-{self.setup.run}-{self._count}-{unit.table}"
        send, recv = trio.open_memory_channel[dict[str, Any] | None](math.inf)
        p = self._pending[key] = _Pending(unit, {g.game_id for g in unit.games} - self._delivered, send, recv)
        try:
            p.future = self.client.submit(_play_unit, unit, self.setup, key=key, pure=False)
            p.future.add_done_callback(lambda _f: self._soon(self._end, key))
            async for msg in recv:
                if msg is None:
                    break
                for game_id, blob in msg["games"]:
                    self._deliver(p, str(game_id), blob, deliver)
            if p.remaining:  # games whose event did not come: from the unit's result
                results: list[tuple[str, bytes]] = await _outcome(self.client, p.future)
                for game_id, blob in results:
                    self._deliver(p, game_id, blob, deliver)
                if p.remaining:
                    raise RuntimeError(f"unit {key}: the worker did not return {sorted(p.remaining)}")
        except BaseException:
            if p.future is not None:
                self._abandoned.append(p.future)  # cancelled by close(), all in one call
            raise
        finally:
            del self._pending[key]
            if self.setup.incoming is not None:
                self._clear(key)
        with suppress(Exception):
            p.future.release()

    def _clear(self, key: str) -> None:
        """Remove the unit's folders in the incoming folder: empty, or holding the
        logs of replayed games that were recorded from an earlier attempt."""
        prefix = _unit_prefix(key)
        with suppress(OSError):
            for entry in os.scandir(self.setup.incoming or ""):
                if entry.name.startswith(prefix):
                    shutil.rmtree(entry.path, ignore_errors=True)

    def _deliver(self, p: _Pending, game_id: str, blob: bytes, deliver: Deliver) -> None:
        if game_id not in p.remaining or game_id in self._delivered:
            return  # a replay (its unit rescheduled) or a repeat: recorded once only
        done: GameDone = pickle.loads(blob)
        if done.log is None:
            done = self._move_in(done)
        else:
            self.sent += 1
        if done.log is not None and not p.unit.compress:
            # a plain log, compressed for the wire; a compressed night's log is written as it came
            done = replace(done, log=self._unzstd.decompress(done.log))
        p.remaining.discard(game_id)
        self._delivered.add(game_id)
        deliver(done)

    def _move_in(self, done: GameDone) -> GameDone:
        """A game whose worker wrote its log into the run's incoming folder: the
        log renamed into ``OUT/games`` (before its row is committed)."""
        src = done.result.log_path
        if src is None:
            return done  # a game without a log
        folder = self.setup.incoming
        where = os.path.dirname(os.path.dirname(src))
        if folder is None or (where != folder and os.path.realpath(where) != os.path.realpath(folder)):
            raise RuntimeError(f"{done.game_id}: a worker left its log outside the run's folder: {src}")
        dst = os.path.join(self.games, os.path.basename(src))
        try:
            os.replace(src, dst)
            page = _frames_page_of(src)
            if page is not None:  # the viewer page the worker wrote as the game was played
                try:
                    os.replace(page, os.path.join(self.games, os.path.basename(page)))
                except FileNotFoundError:
                    pass
        except OSError as exc:
            raise UserError(
                f"{self.games}: cannot move the log of {done.game_id} there from {src}: {exc.strerror or exc} "
                "(a worker running as another user? run the workers as this user, or pass --send-logs); "
                "the games recorded so far are safe: run again to resume"
            ) from None
        self.moved += 1
        return replace(done, result=msgspec.structs.replace(done.result, log_path=dst))


def _frames_page_of(log: str) -> str | None:
    """The viewer page next to a game log (``GAME.frames.js`` beside ``GAME.jsonl[.zst]``)."""
    from referee.runtime.gamelog import LOG_SUFFIXES

    name = os.path.basename(log)
    for suffix in LOG_SUFFIXES:
        if name.endswith(suffix):
            return os.path.join(os.path.dirname(log), name[: -len(suffix)] + ".frames.js")
    return None


async def _wait(fut: Future[Any]) -> None:
    """Wait in trio until ``fut`` is done; cancel it if cancelled."""
    token = trio.lowlevel.current_trio_token()
    done = trio.Event()

    def soon(_f: object) -> None:
        try:
            token.run_sync_soon(done.set)
        except trio.RunFinishedError:
            pass

    fut.add_done_callback(soon)  # type: ignore[no-untyped-call]
    try:
        await done.wait()
    except BaseException:
        with suppress(Exception):
            fut.cancel(force=True)  # type: ignore[no-untyped-call]
        raise


async def _outcome(client: Client, fut: Future[Any]) -> Any:
    """A done future's result (fetched from its worker in a thread); its
    exception re-raised: a :class:`UserError` as it is, a lost unit (its
    workers kept dying, or it was cancelled) as a :class:`UserError`."""
    status = fut.status
    if status == "finished":
        return await trio.to_thread.run_sync(fut.result)
    if status == "error":
        exc = await trio.to_thread.run_sync(fut.exception)
        if isinstance(exc, UserError):
            raise UserError(str(exc)) from None
        name = type(exc).__name__
        if name == "KilledWorker":
            raise UserError(
                f"{fut.key}: the workers playing it died again and again (dask gave up: {exc}); the "
                "games recorded so far are safe: check the workers and run again to resume"
            ) from None
        raise exc
    raise UserError(
        f"{fut.key}: the cluster dropped it ({status}); the games recorded so far are safe: run again to resume"
    )


# --------------------------------------------------------------------------
# on the worker

_READY: set[str] = set()  # runs whose paths this worker process protects already


def _ensure_ready(setup: WorkerSetup) -> None:
    if setup.run in _READY:
        return
    from distributed import get_worker

    from referee.runtime.sandbox import protect_paths

    own: list[str] = []
    with suppress(ValueError, AttributeError):  # this worker's own TLS files: never shown to its bots
        own = _key_files(get_worker().security)
    protect_paths(secret=[*setup.secret, *own], bot_folders=list(setup.bot_folders))
    _READY.add(setup.run)


def _address() -> str:
    from distributed import get_worker

    try:
        return str(get_worker().address)
    except ValueError:
        return "?"


def worker_build_records(league: League) -> Path:
    """Where a worker keeps the build cache of ``league``'s night: its output folder when this host
    sees it (and may write it), else ``$TMPDIR/card-referee-builds-UID/<hash of the folder's path>``."""
    out = Path(league.out)
    if out.is_dir() and os.access(out, os.W_OK):
        return out
    digest = hashlib.sha256(str(out).encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"card-referee-builds-{os.getuid()}" / digest
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def _build_on_worker(league: League, rebuild: bool = False) -> str | dict[int, str] | None:
    """The builds on this worker's host; the failure text, or None; under ``broken_bot =
    "forfeit"`` the failed builds' texts by bot index (the other bots built).

    Builds are cached as on one machine (:mod:`referee.league.buildcache`, unless
    ``rebuild``): in ``OUT/builds.json`` where this host sees the night's output folder
    (this machine, a shared file system), else in a folder of this host's own
    (:func:`worker_build_records`), so a worker host builds a bot again only when its
    folder or build command changed."""
    from referee.league.preflight import run_builds

    where = worker_build_records(league)
    try:
        failed = trio_run(
            lambda: run_builds(
                league,
                give_up=league.faults.broken_bot == "forfeit",
                cache=True,
                rebuild=rebuild,
                records_dir=where,
            )
        )
    except UserError as exc:
        return str(exc)
    return failed or None


@dataclass(frozen=True, slots=True)
class _CheckReport:
    address: str
    version: str
    failures: list[tuple[int, str, bool]]  # bot index, message, whether its process ran
    hellos: dict[int, dict[str, Any]] = field(default_factory=dict)  # the passing bots' hello, by index


def _check_on_worker(setup: WorkerSetup, entrants: list[Any], max_line: int) -> _CheckReport:
    """The start check on this worker (and its bot paths protected)."""
    from referee.league.preflight import start_check

    _ensure_ready(setup)
    hellos: dict[int, dict[str, Any]] = {}
    _, failures = trio_run(lambda: start_check(entrants, max_line=max_line, limit=8, hellos=hellos))
    return _CheckReport(
        _address(), referee.__version__, [(f.index, str(f), f.dead is not None) for f in failures], hellos
    )


def _play_unit(unit: Unit, setup: WorkerSetup) -> list[tuple[str, bytes]]:
    """Play one unit on this worker (a Dask task); the finished games are sent
    as events (those that end within :data:`BATCH_S` of each other in one), and
    all of them are returned at the end (kept on the worker: the coordinator
    fetches the result only if some game's event never reached it)."""
    from distributed import get_worker
    from distributed.worker import thread_state  # type: ignore[attr-defined]

    worker = get_worker()
    key = thread_state.key
    _ensure_ready(setup)
    in_place = _in_place_folder(setup, key)  # logs written where the coordinator takes them
    tmp = in_place or Path(tempfile.mkdtemp(prefix="referee-unit-"))
    out: list[tuple[str, bytes]] = []
    batch: list[tuple[str, bytes]] = []
    zc = zstandard.ZstdCompressor(level=3)

    def flush() -> None:
        if batch:
            worker.log_event(setup.topic, {"unit": key, "games": list(batch)})
            batch.clear()

    def deliver(done: GameDone) -> None:
        path = Path(done.result.log_path) if done.result.log_path else None
        data = None
        if path is not None and in_place is None:
            raw = path.read_bytes()
            data = raw if is_zstd(raw) else zc.compress(raw)  # on the wire always zstandard, compressed once
            path.unlink()
        blob = pickle.dumps(
            GameDone(done.game_id, done.result, done.wall_ms, data, done.stderr_logged),
            protocol=pickle.HIGHEST_PROTOCOL,
        )
        out.append((done.game_id, blob))
        batch.append((done.game_id, blob))
        if len(batch) >= BATCH_GAMES:
            flush()

    try:
        try:
            trio_run(_play_watched, unit, tmp, deliver, flush, lambda: _released(worker, key), in_place is not None)
        finally:
            flush()  # before the task ends: the coordinator sees these games before the unit's end
    except UserError as exc:
        raise UserError(f"worker {worker.address}: {exc}") from None
    except BaseExceptionGroup as eg:
        from referee.errors import user_facing

        found = user_facing(eg)
        if isinstance(found, UserError):
            raise UserError(f"worker {worker.address}: {found}") from None
        raise
    finally:
        if in_place is None:
            shutil.rmtree(tmp, ignore_errors=True)  # (the coordinator clears the incoming folder)
    return out


def _in_place_folder(setup: WorkerSetup, key: str) -> Path | None:
    """A new folder for this attempt at the unit in the run's incoming folder,
    if this worker sees that folder at the coordinator's path, runs as the user
    who owns it and can write in it; else None (the logs are sent)."""
    if setup.incoming is None:
        return None
    try:
        if os.stat(setup.incoming).st_uid != os.geteuid():
            return None  # another user's (say, this worker runs as root): it could not move our files
        return Path(tempfile.mkdtemp(prefix=_unit_prefix(key), dir=setup.incoming))
    except OSError:  # not here (no shared file system), or not writable
        return None


def _released(worker: Any, key: str) -> bool:
    """Whether the scheduler no longer wants this task (cancelled, or its client gone)."""
    if getattr(worker.status, "name", "running") not in ("running", "paused"):
        return True
    ts = worker.state.tasks.get(key)
    return ts is None or ts.state in ("cancelled", "released", "forgotten")


async def _play_watched(
    unit: Unit,
    tmp: Path,
    deliver: Deliver,
    flush: Callable[[], None],
    released: Callable[[], bool],
    in_place: bool = False,
) -> None:
    """Play ``unit`` into ``tmp``; ``in_place``: ``tmp`` is in the run's incoming folder
    (``OUT/.incoming/<run>/<unit>``), so the games are watched live into ``OUT/live`` and each
    game's viewer page is written next to its log (the coordinator moves both into ``OUT/games``)."""
    from referee.league.local import LocalExecutor
    from referee.view.live import LIVE_DIR, LiveViewers

    async with trio.open_nursery() as nursery:

        async def watch() -> None:
            while not released():  # noqa: ASYNC110  the worker's state, polled across threads: no trio.Event to wait on
                await trio.sleep(WATCH_S)
            nursery.cancel_scope.cancel()

        async def send() -> None:
            while True:
                await trio.sleep(BATCH_S)
                flush()

        nursery.start_soon(watch)
        nursery.start_soon(send)
        # the given-up bots of this unit's lineup (the night's others are not seated here)
        unit = dataclasses.replace(unit, given_up=unit.given_up & {e.index for e in unit.lineup})
        dead = await _given_up_sessions(unit, nursery)
        viewers = LiveViewers(tmp.parent.parent.parent / LIVE_DIR, tmp) if in_place else None
        await LocalExecutor(tmp, dead, viewers=viewers).play(unit, deliver)
        nursery.cancel_scope.cancel()


async def _given_up_sessions(unit: Unit, nursery: trio.Nursery) -> dict[int, Any]:
    """Dead sessions for the unit's given-up bots: the failed start here (it
    holds the exit status and stderr), or a closed one if it starts on this
    worker (it was given up on another)."""
    from referee.league.pool import BotStartFailed, start_bot
    from referee.runtime import BotSession

    dead: dict[int, Any] = {}
    for entrant in unit.lineup:
        if entrant.index not in unit.given_up or entrant.index in dead:
            continue
        try:
            sess = await start_bot(entrant, nursery, max_line=unit.max_line)
        except BotStartFailed as exc:
            # a program missing altogether (or a failed build's) has no process: a session that never started
            dead[entrant.index] = exc.dead or BotSession.never_started(entrant.bot, str(exc).splitlines()[0])
            continue
        await sess.close()
        sess.death = "given up: it failed the start check on another worker"
        dead[entrant.index] = sess
    return dead
