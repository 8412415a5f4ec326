"""``referee schema [--out DIR]``: the JSON Schema of every protocol message."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from referee.errors import UserError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "schema",
        help="write the JSON Schema of every protocol message",
        description="Write the JSON Schemas of protocol v1, generated from the message types: "
        "referee-to-bot, bot-to-referee and the events, one file per union and per "
        "message. Without --out, print them all as one JSON object.",
    )
    p.add_argument("--out", metavar="DIR", help="directory to write <group>.schema.json and <group>/<type>.schema.json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from protocol.schema import schemas

    all_schemas = schemas()
    if not args.out:
        json.dump(all_schemas, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    out = Path(args.out)
    try:
        for name, schema in all_schemas.items():
            path = out / f"{name}.schema.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(schema, indent=2) + "\n")
    except OSError as exc:
        raise UserError(f"cannot write schemas to {str(out)!r}: {exc.strerror}") from None
    print(f"wrote {len(all_schemas)} schemas to {out}/")
    return 0
