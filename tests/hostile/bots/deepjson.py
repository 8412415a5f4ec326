"""Answers its first turn with a legal-looking ask carrying an extra field
nested thousands of levels deep (about 6 KiB, well under the line limit):
the decoder recurses into skipped values, so this must become a malformed
fault, never a crash of the referee. Knob 1 = "late": send it only after
600 ms past the move limit (expected: timeout, then the late line is stale:
the referee watches a timed-out bot for up to 1,000 ms more, and a referee stalled by a loaded
machine by less than 600 ms still judges the turn before the line comes)."""

import time

from _common import arg, legal_reply, move_ms, play, send_raw

DEPTH = 3000


def on_turn(turn, rules, n):
    if n == 0:
        if arg(1, "") == "late":
            time.sleep((move_ms(turn) + 600) / 1000)
        send_raw(
            b'{"type":"ask","id":%d,"target":0,"x":' % turn["id"] + b'{"a":' * DEPTH + b"1" + b"}" * DEPTH + b"}\n"
        )
        return None
    return legal_reply(turn, rules)


play("deepjson", on_turn)
