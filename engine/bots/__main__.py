"""``python -m engine.bots NAME``: run a built-in bot as a protocol-1 JSON-lines program."""

from __future__ import annotations

import json
import sys

from engine.bots import LOCAL_BOTS, make_bot


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        print(f"NAME: {', '.join(sorted(LOCAL_BOTS))}", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    try:
        bot = make_bot(argv[0])
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            bot.hello(message)
            reply = {"type": "ready", "name": bot.name}
        elif kind == "turn":
            reply = {"id": message["id"], "action": bot.act(message)}
        else:
            bot.notify(message)
            continue
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
