"""Floods stdout with megabytes without a newline before it answers hello
(expected: the start fails as malformed, the referee stays bounded)."""

import sys

try:
    for _ in range(256):
        sys.stdout.buffer.write(b"h" * 65536)
        sys.stdout.buffer.flush()
except BrokenPipeError:
    pass
