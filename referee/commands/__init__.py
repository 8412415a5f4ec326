"""Command-line commands, one module each (see :mod:`referee.cli`)."""
