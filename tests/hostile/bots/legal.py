"""A fast, always-legal bot: the well-behaved neighbour of the hostile ones."""

from _common import play

play("legal")
