"""card-referee: a referee for card-game bot leagues."""

__version__ = "0.1.0"
