"""League nights: config, schedule, ledger, standings, report and the runner.

The league asks the runtime only one thing: "play this GameSpec with these
BotSessions, give me the GameResult" (see docs/ARCHITECTURE.md section 4).

* :mod:`referee.league.config` - the TOML config, decoded strictly, every mistake with its key path.
* :mod:`referee.league.schedule` - round-robin, duplicate-format schedule with stable game ids.
* :mod:`referee.league.ledger` - the SQLite results ledger (WAL, one transaction per game).
* :mod:`referee.league.standings` - standings, ratings, head-to-head; JSON/CSV/Markdown output.
* :mod:`referee.league.report` - the self-contained HTML report.
* :mod:`referee.league.runner` - plays a league with trio (resume, progress, Ctrl-C).
"""
