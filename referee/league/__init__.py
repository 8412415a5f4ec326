"""League nights: config, schedule, ledger, standings, report, and playing them.

The league asks the runtime only to start bots and to "play this GameSpec with
these BotSessions, give me the GameResult" (see docs/ARCHITECTURE.md section 4).

* :mod:`referee.league.config` - the TOML config, decoded strictly, every mistake with its key path.
* :mod:`referee.league.schedule` - round-robin, duplicate-format schedule with stable game ids.
* :mod:`referee.league.ledger` - the SQLite results ledger (WAL, one transaction per game, run lock).
* :mod:`referee.league.outdir` - the output directory: opened, locked, checked against the run.
* :mod:`referee.league.work` - the unit of work (a share of a table's games) and the Executor interface.
* :mod:`referee.league.local` - the local executor (trio, bot processes on this machine).
* :mod:`referee.league.pool` - the bot processes of one unit's lineup.
* :mod:`referee.league.preflight` - builds, start check and memory warning before the first game.
* :mod:`referee.league.runner` - drives the schedule through an executor, commits each game (resume,
  progress, Ctrl-C).
* :mod:`referee.league.shards`, :mod:`referee.league.merge` - a night split over machines.
* :mod:`referee.league.standings` - standings, ratings, head-to-head; JSON/CSV/Markdown output.
* the night's report is written by :mod:`referee.view.night` (the view sits above the league).
"""
