"""``python -m arena_cli [--server URL] COMMAND``: the bot author's command line (README, "The
command-line client"). Exit status 0 on success, 1 when the server refuses or a validation or
round-robin fails, 2 for bad arguments, 3 when ``--timeout`` runs out before a validation is
final."""

from __future__ import annotations

import argparse
import getpass
import json
import math
import os
import sys
import time
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena_cli.api import DEFAULT_SERVER, Api, ApiError, package_bytes, save_token

#: The replay format ``debug`` reads (docs/protocol.md).
REPLAY_FORMAT = "quatresept-replay/1"
FINAL_VERSION = ("ready", "failed")
FINAL_TOURNAMENT = ("finished", "cancelled")
#: The exit status when ``--timeout`` runs out before a validation is final.
EXIT_TIMEOUT = 3
#: Seconds ``upload`` and ``status --wait`` wait for a validation unless ``--timeout`` says.
DEFAULT_TIMEOUT = 600.0


@dataclass(frozen=True)
class Pace:
    """How a wait polls: ``sleep(every)`` between two polls, elapsed time read from ``clock``
    (monotonic: a changed wall clock neither ends nor stretches a wait)."""

    every: float = 1.0
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


#: The pace of the validation waits; tests put a fake clock here.
PACE = Pace()


class WaitTimeout(Exception):
    """A version's validation still not final when ``--timeout`` ran out; ``str()`` names the
    version, its last status and how to keep waiting."""

    def __init__(self, server: str, version_id: int, status: str, timeout: float) -> None:
        self.version_id = version_id
        self.status = status
        super().__init__(
            f"version {version_id} is still {status} after {timeout:g} s: "
            "the queue may be busy, or no worker is running; "
            f"`python -m arena_cli --server {server} status {version_id} --wait` to keep waiting "
            "(--timeout 0: for ever)"
        )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    api = Api.for_server(args.server)
    try:
        return args.run(api, args)
    except ApiError as error:
        print(f"error: {error}", file=sys.stderr)
        if error.status == 401:
            print(f"sign in first: python -m arena_cli --server {api.server} login",
                  file=sys.stderr)
        return 1
    except WaitTimeout as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_TIMEOUT
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m arena_cli", description=__doc__)
    parser.add_argument("--server", default=os.environ.get("ARENA_SERVER", DEFAULT_SERVER),
                        help=f"the arena's address (default $ARENA_SERVER or {DEFAULT_SERVER})")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    login = commands.add_parser("login", help="sign in once: the API token is kept")
    login.add_argument("--username", "-u")
    login.add_argument("--password-stdin", action="store_true",
                       help="read the password from stdin (scripts)")
    login.set_defaults(run=cmd_login)

    upload = commands.add_parser(
        "upload", help="upload a bot file or folder (a new bot, or --bot ID for a new version) "
                       "and watch its validation")
    upload.add_argument("path", type=Path, help="a .py or .js file, a .zip, or a folder with "
                                                "a bot.json manifest")
    upload.add_argument("--name", help="the new bot's name (default: the file's name)")
    upload.add_argument("--bot", type=int, help="upload a new version of this bot id")
    upload.add_argument("--no-wait", dest="wait", action="store_false",
                        help="do not wait for the validation")
    _add_timeout(upload, "")
    upload.set_defaults(run=cmd_upload)

    status = commands.add_parser("status", help="a version's validation: status, fault, stderr")
    status.add_argument("version", type=int)
    status.add_argument("--wait", action="store_true", help="wait until it is final")
    _add_timeout(status, "with --wait: ")
    status.set_defaults(run=cmd_status)

    run = commands.add_parser("run", help="start a round-robin between versions and follow it")
    run.add_argument("versions", type=int, nargs="+", help="version ids (at least two)")
    run.add_argument("--name", default="round-robin from the command line")
    run.add_argument("--preset", default="quatre-sept")
    run.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE",
                     dest="options", help="change a rule option (repeatable)")
    run.add_argument("--pairs", type=int, default=1, help="duplicate pairs per pairing")
    run.add_argument("--no-follow", dest="follow", action="store_false")
    run.set_defaults(run=cmd_run)

    follow = commands.add_parser("follow", help="follow a round-robin's progress to its end")
    follow.add_argument("tournament", type=int)
    follow.set_defaults(run=cmd_follow)

    replay = commands.add_parser("replay", help="save a match's replay, or open it in a browser")
    replay.add_argument("match", type=int)
    replay.add_argument("--save", type=Path, metavar="FILE", help="write the replay's JSON here")
    replay.add_argument("--open", action="store_true", help="open the replay viewer")
    replay.set_defaults(run=cmd_replay)

    debug = commands.add_parser(
        "debug", help="replay one seat of a played match to a local bot: where it answers "
                      "differently, with its stderr and timing")
    debug.add_argument("match", help="a match id on the server, or a replay file")
    debug.add_argument("--seat", type=int, required=True, choices=range(4))
    debug.add_argument("bot", type=Path, help="the local bot: a file, a .zip or a folder")
    debug.add_argument("--stop", metavar="DEAL.TRICK",
                       help="stop after this deal and trick (e.g. 2.5)")
    debug.add_argument("--all", action="store_true", help="show every decision, not only "
                                                          "the differing ones")
    debug.add_argument("--json", action="store_true", help="one JSON line per decision shown")
    debug.add_argument("--sandbox", default="bwrap", help="bwrap (default) or docker")
    debug.set_defaults(run=cmd_debug)
    return parser


def _add_timeout(parser: argparse.ArgumentParser, when: str) -> None:
    parser.add_argument(
        "--timeout", type=_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
        help=f"{when}stop waiting for the validation after this long, with exit status "
             f"{EXIT_TIMEOUT} (default {DEFAULT_TIMEOUT:g}; 0: wait for ever)")


def _seconds(text: str) -> float:
    """A ``--timeout``: 0 (wait for ever) or a finite number of seconds from 1 up; ``nan``,
    ``inf`` and a positive number that would round to 0 are refused."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    mantissa = text.lower().split("e")[0]
    zero = value == 0 and not any(digit in mantissa for digit in "123456789")  # not 1e-400
    if not (zero or 1 <= value < math.inf):
        raise argparse.ArgumentTypeError(f"expected 0 or seconds from 1 up, got {text!r}")
    return value


# --- commands -------------------------------------------------------------------------------------


def cmd_login(api: Api, args: argparse.Namespace) -> int:
    username = args.username or input("username: ")
    password = sys.stdin.readline().rstrip("\n") if args.password_stdin else getpass.getpass()
    token = api.login(username, password)
    path = save_token(api.server, token)
    print(f"signed in to {api.server} as {username}; token kept in {path}")
    return 0


def cmd_upload(api: Api, args: argparse.Namespace) -> int:
    filename, data = package_bytes(args.path)
    if args.bot is not None:
        version = api.upload_version(args.bot, filename, data)
        print(f"uploaded {version['bot_name']} v{version['number']} (version {version['id']})")
        version_id = version["id"]
    else:
        name = args.name or _default_name(args.path)
        bot = api.upload_bot(name, filename, data)
        version_id = bot["latest_version"]["id"]
        print(f"uploaded {bot['owner']}/{bot['name']} v1 (bot {bot['id']}, version {version_id})")
    if not args.wait:
        return 0
    return _show_version(_watch_version(api, version_id, args.timeout))


def cmd_status(api: Api, args: argparse.Namespace) -> int:
    if args.wait:
        return _show_version(_watch_version(api, args.version, args.timeout))
    return _show_version(api.version(args.version))


def _watch_version(api: Api, version_id: int, timeout: float,
                   pace: Pace | None = None) -> dict[str, Any]:
    """Poll the version until its validation is final, printing each new status; after
    ``timeout`` seconds (0: no limit) still not final, one last poll, then ``WaitTimeout``."""
    pace = pace or PACE
    deadline = pace.clock() + timeout if timeout else math.inf
    shown = ""
    while True:
        version = api.version(version_id)
        if version["status"] != shown:
            shown = version["status"]
            print(f"version {version_id}: {shown}", flush=True)
        if shown in FINAL_VERSION:
            return version
        left = deadline - pace.clock()
        if left <= 0:
            raise WaitTimeout(api.server, version_id, shown, timeout)
        pace.sleep(min(pace.every, left))


def _show_version(version: dict[str, Any]) -> int:
    print(f"{version['bot_name']} v{version['number']}: {version['status']}")
    if version.get("fault"):
        print(f"fault: {version['fault']['kind']}: {version['fault']['detail']}")
    if version["status"] == "failed" and version.get("log"):
        print("stderr (last lines):")
        print(_indent(version["log"]))
    return 1 if version["status"] == "failed" else 0


def cmd_run(api: Api, args: argparse.Namespace) -> int:
    rules: dict[str, Any] = {"preset": args.preset}
    for text in args.options:
        name, sep, value = text.partition("=")
        if not sep:
            raise ValueError(f"expected OPTION=VALUE, got {text!r}")
        rules[name.strip().replace("-", "_")] = _typed(value.strip())
    created = api.create_tournament({"name": args.name, "rules": rules,
                                     "versions": args.versions, "pairs": args.pairs})
    print(f"round-robin {created['id']} ({created['rules_key']}): {created['total']} matches; "
          f"{api.server}/tournaments/{created['id']}/")
    if not args.follow:
        return 0
    return _follow(api, created["id"])


def _typed(value: str) -> Any:
    """An option's value as JSON would have it: true/false, an integer, or the text."""
    lowered = value.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(value)
    except ValueError:
        return value


def cmd_follow(api: Api, args: argparse.Namespace) -> int:
    return _follow(api, args.tournament)


def _follow(api: Api, tournament_id: int, every: float = 1.0) -> int:
    """A progress bar until the round-robin ends, then its standings."""
    tty = sys.stdout.isatty()
    last = None
    while True:
        detail = api.tournament(tournament_id)
        line = progress_bar(detail["done"], detail["total"]) + f" {detail['status']}"
        if line != last:
            print(("\r" + line) if tty else line, end="" if tty else "\n", flush=True)
            last = line
        if detail["status"] in FINAL_TOURNAMENT:
            break
        time.sleep(every)
    if tty:
        print()
    print(f"{'#':>2} {'version':<32} {'points':>6} {'W-D-L':>9} {'faults':>6}")
    for row in detail["standings"]:
        wdl = f"{row['wins']}-{row['draws']}-{row['losses']}"
        print(f"{row['rank']:>2} {row['label']:<32} {row['points']:>6g} {wdl:>9} "
              f"{row['faults']:>6}")
    return 0 if detail["status"] == "finished" else 1


def progress_bar(done: int, total: int, width: int = 30) -> str:
    """``[#########.....................]  3/10``."""
    filled = round(width * done / total) if total else width
    return f"[{'#' * filled}{'.' * (width - filled)}] {done:>{len(str(total))}}/{total}"


def cmd_replay(api: Api, args: argparse.Namespace) -> int:
    api.match(args.match)  # a 404 for a match that does not exist, before any address is shown
    if args.save:
        args.save.write_text(json.dumps(api.replay(args.match)))
        print(f"replay of match {args.match} written to {args.save}")
    url = f"{api.server}/matches/{args.match}/"
    if args.open:
        webbrowser.open(url)
    if not args.save or args.open:
        print(url)
    return 0


def cmd_debug(api: Api, args: argparse.Namespace) -> int:
    import subprocess

    from arena_cli.debugging import run_debug

    replay = _load_replay(api, args.match)
    stop = _parse_stop(args.stop) if args.stop else None
    try:
        return run_debug(replay, seat=args.seat, bot=args.bot, stop=stop, show_all=args.all,
                         as_json=args.json, backend=args.sandbox, out=print)
    except (RuntimeError, subprocess.SubprocessError) as error:  # the sandbox's, not the bot's
        print(f"error: the {args.sandbox} sandbox could not run your bot here: {error}",
              file=sys.stderr)
        return 1


def _load_replay(api: Api, match: str) -> dict[str, Any]:
    path = Path(match)
    if path.is_file():
        replay = json.loads(path.read_text())
        if not isinstance(replay, dict) or replay.get("format") != REPLAY_FORMAT or not all(
            key in replay for key in ("players", "rules", "deals")
        ):
            raise ValueError(f"{match} is not a replay ({REPLAY_FORMAT}): save one with "
                             "`python -m arena_cli replay ID --save FILE`")
        return replay
    if not match.isdigit():
        raise ValueError(f"{match!r} is neither a match id nor a replay file")
    return api.replay(int(match))


def _default_name(path: Path) -> str:
    """A bot name from the file's or folder's own name (``upload .`` names the folder): the
    letters, digits, ``-`` and ``_`` of its stem."""
    resolved = path.resolve()
    stem = resolved.name if resolved.is_dir() else resolved.stem  # a folder ``bot.v2`` keeps it
    name = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "-" for c in stem)
    name = name.strip("-_.")[:64]
    if not name:
        raise ValueError(f"no bot name can be made from {path}: give one with --name")
    return name


def _parse_stop(text: str) -> tuple[int, int]:
    deal, _, trick = text.partition(".")
    try:
        return int(deal), int(trick or 99)
    except ValueError:
        raise ValueError(f"--stop takes DEAL.TRICK (e.g. 2.5), not {text!r}") from None


def _indent(text: str, prefix: str = "  | ") -> str:
    return "\n".join(prefix + line for line in text.rstrip("\n").splitlines()[-40:])


Printer = Callable[[str], None]

if __name__ == "__main__":
    sys.exit(main())
