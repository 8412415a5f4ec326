"""Re-simulate a game log with the hand machine and prove it.

:func:`load_log` reads a log and checks the shape of every record (the Structs
of :mod:`referee.core.records`, strict); a missing, unreadable, corrupt or
truncated file raises ``UserError`` naming the line (``<log> line 7: ...``):
the CLI prints ``error: ...`` and exits 2.

:func:`replay` then drives the same hand machine that played the game
(:class:`referee.core.machine.HandMachine`) with what the log records as its
inputs - each reply as received, each refused line, each timeout, crash,
failed write and closed pipe, the stale lines of a timed-out bot - and
compares everything the machine emits with the log, record by record: every
message sent to every seat (``start``, events with their ``seq``, turns,
``error`` messages, ``end``), every action (a fallback move must be the one the
seeded fallback generator draws), every fault, retry, hand and hand end, and
the footer (scores, ranks, win shares, forfeits, faults). The log cannot hold
anything the machine would not have written for those inputs, nor miss
anything, except that a seat that faulted may miss the tail of its messages
(its pipe may have closed; the log does not say when).

Only the audit of measured times is replay's own (:mod:`.timing`):

* ``t`` never decreases from record to record and is never negative;
* a bot's accepted reply: ``ms`` >= 0 and at most the decision's limit
  (``move_ms``, or min(``move_ms``, bank left) with a bank). With the cpu clock
  ``ms`` is CPU time, checked strictly, and ``wall_ms`` is under the wall
  ceiling; a wall time may exceed its limit by ``LATE_READ_MS`` (a reply already
  waiting when an overloaded referee got to run is accepted and measured
  then); a fallback has ``ms`` 0;
* the wall time of a reply fits between the ``t`` of the record that carried
  its turn and its own ``t``; a wall-clock ``timeout`` comes at least the
  limit after its turn;
* the bank: each turn's ``left_ms`` is ``int(bank_ms - ms charged)`` (each
  decision's final outcome is charged once; the bank restarts each hand);
* the footer's ``think_ms``: counts exact, means and maxima from the logged
  times (bounds only when a timeout's or crash's time is not logged).

Free fields (not provable, not checked): stderr tails, the referee version,
the bots' commands, hellos and sandbox, the start date.

A log cut short by Ctrl-C (footer reason ``aborted``, detail "the referee was
interrupted") is verified up to the interruption (``ReplayReport.interrupted``);
a log that reached its size cap is verified up to its ``capped`` record
(``ReplayReport.capped``). The first difference stops the replay; the report's
``mismatches`` then holds one sentence naming the log line, e.g. ``line 57:
the referee's turn to seat 2 differs from the re-simulation: hand ...``.

The inputs come from the log as a stream (:mod:`.stream`): in a version 3
log each reply is its ``act``/``in``/``bad`` record and every other input an
``input`` record written as it came, so replay is: build the machine from the
header, feed the recorded inputs, compare the outputs. Versions 1 and 2 did
not record those inputs: :mod:`.legacy`, the one module that knows the old
formats, reads them back from the records they caused.

The package: :mod:`.load` (reading and checking records), :mod:`.stream` and
:mod:`.legacy` (the inputs), :mod:`.sim` (feeding and comparing),
:mod:`.compare`, :mod:`.timing` (the audit of measured times),
:mod:`.transcript`, :mod:`.report`.

No bots, no trio, no I/O besides reading the file. Pure function of the file:
never raises anything but ``UserError``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from referee.core.records import HandRec, OutRec
from referee.errors import UserError

from .legacy import legacy_stream
from .load import load_log, parse_log
from .report import ReplayReport, _Mismatch
from .sim import _Replay
from .stream import Records, Stream, stream_of

__all__ = ["ReplayReport", "load_log", "parse_log", "replay", "replay_records"]


def replay(path: str | Path) -> ReplayReport:
    """Replay the log at ``path`` (see the module docstring).

    Raises ``UserError`` for a missing, unreadable, corrupt or truncated log
    (naming the line). A well-formed log that differs from the re-simulation
    gives a report whose ``mismatches`` holds the first difference.
    """
    return replay_records(load_log(path), str(path))


def replay_records(
    records: list[tuple[int, Any, dict[str, Any]]], name: str = "log", observer: Any = None
) -> ReplayReport:
    """:func:`replay` of records already loaded (``observer``: also told about every change, for the viewer)."""
    report = ReplayReport(header=records[0][2], footer=records[-1][2]["footer"])
    stream = inputs_of(records)
    players = records[0][1].players
    all_dead = players > 0 and {e.seat for e in stream.initial} >= set(range(players))
    if (
        any(isinstance(r, HandRec) for _, r, _ in records)
        and not any(isinstance(r, OutRec) for _, r, _ in records)
        and not all_dead  # a table of broken entries given up before the night: nothing was sent
    ):
        raise UserError(
            f"{name}: the log has no `out` records (the messages the referee sent); without them it "
            "cannot be proved. Only logs written by this referee with their `out` records can be "
            "replayed"
        )
    sim: _Replay | None = None
    try:
        sim = _Replay(records, report, stream, observer)
        sim.run()
    except _Mismatch as exc:
        report.mismatches.append(str(exc))
    except UserError:
        raise
    except Exception as exc:  # a shape the checks above missed: still one clear sentence
        where = f"line {sim.line}" if sim is not None else "the header"
        report.mismatches.append(f"{where}: the log cannot be re-simulated here ({type(exc).__name__}: {exc})")
    return report


def inputs_of(records: Records) -> Stream:
    """The machine's input stream of a loaded log: read from its ``input`` records (version 3), or
    converted by the one legacy converter (:mod:`.legacy`, versions 1 and 2)."""
    version = records[0][1].log_version
    if version < 3:
        return legacy_stream(version, records[1:-1])
    return stream_of(records)
