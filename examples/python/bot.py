"""A complete Quatre Sept bot in Python: it plays a random legal action.

Protocol 1 in one paragraph: the referee writes one JSON object per line on our stdin. We answer
"hello" with a "ready" line and every "turn" with the turn's id and one action copied from its
"legal" list. "deal_end" and "match_end" need no answer. We must answer within the clock (1 s per
decision by default) and print nothing else on stdout: logs go to stderr.

Run it locally against the built-in random bot, from the repository's root:
    .venv/bin/python manage.py play --rules quatre-sept examples/python/bot.py builtin:random
Upload it as it is, or zip it with other files and a bot.json: {"command": "python3 bot.py"}.
"""

import json
import random
import sys


def choose(turn: dict) -> str:
    """Pick an action. Replace this with your strategy: turn["state"] is what you can see
    (your hand, the tricks so far, the score...), turn["legal"] every action you may take."""
    return random.choice(turn["legal"])


def send(message: dict) -> None:
    """Write one JSON line on stdout and flush it, or the referee never sees it."""
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:  # one message per line, until the referee closes our stdin
        message = json.loads(line)
        kind = message["type"]
        if kind == "hello":
            # message["seat"], message["rules"] and message["clock"] are worth keeping.
            send({"type": "ready", "name": "random-python"})
        elif kind == "turn":
            send({"id": message["id"], "action": choose(message)})
        elif kind == "deal_end":
            print("deal over:", message.get("score"), file=sys.stderr)  # stderr is our log
        elif kind == "match_end":
            break  # the referee closes stdin next; just exit


if __name__ == "__main__":
    main()
