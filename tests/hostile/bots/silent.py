"""Answers hello, then never answers a turn (expected fault: timeout)."""

from _common import play

play("silent", lambda turn, rules, n: None)
