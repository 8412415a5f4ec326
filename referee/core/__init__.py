"""The referee core: what a game is, without I/O.

* :mod:`referee.core.spec` - the shapes: clock, fault policy, game spec, result;
* :mod:`referee.core.machine` - the hand machine, the protocol logic of one
  game or match, driven by the runtime (real bots), replay (a log) and the viewer;
* :mod:`referee.core.records` - the game log's record types;
* :mod:`referee.core.errors`, :mod:`referee.core.decode` - bot faults and the
  decoding of a bot's line.

The core imports the rules and the protocol, nothing above them: no trio, no
processes, no files.
"""
