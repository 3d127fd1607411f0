"""Running one untrusted bot program: packages, confined runners and protocol 1's conversation.

Typical use by the platform::

    bot = install_package(data, "bot.zip", dest)            # or inspect_package to validate only
    with open_session(confined_runner("bwrap"), bot, Clock()) as session:
        session.hello({...}); action = session.turn({...}); session.notify({...})

Built-in bots run through ``TrustedRunner().start(TrustedProgram(argv))`` instead. This package
must not import Django, Celery or ``engine``.
"""

from sandbox.faults import FAULT_KINDS, BotFault
from sandbox.package import (
    BotPackage,
    InstalledBot,
    PackageError,
    inspect_package,
    install_package,
)
from sandbox.protocol import MAX_LINE_BYTES, PROTOCOL_VERSION, Clock
from sandbox.runners import (
    CONFINED_BACKENDS,
    BotProcess,
    Limits,
    Runner,
    TrustedProgram,
    TrustedRunner,
    confined_runner,
)
from sandbox.session import BotSession, open_session

__all__ = [
    "CONFINED_BACKENDS",
    "FAULT_KINDS",
    "MAX_LINE_BYTES",
    "PROTOCOL_VERSION",
    "BotFault",
    "BotPackage",
    "BotProcess",
    "BotSession",
    "Clock",
    "InstalledBot",
    "Limits",
    "PackageError",
    "Runner",
    "TrustedProgram",
    "TrustedRunner",
    "confined_runner",
    "inspect_package",
    "install_package",
    "open_session",
]
