"""Bot packages: validate an upload and unpack it into a folder a runner can run.

A package is one of:

- a single ``.py`` file, run as ``python3 main.py``;
- a single ``.js`` file, run as ``node main.js``;
- a ``.zip`` whose manifest ``bot.json`` names the command: ``{"command": "python3 main.py"}``.
  Without a manifest, a zip with exactly one of ``main.py`` / ``main.js`` at its root runs it.
  A zip whose entries all sit in one top folder (``mybot/bot.json``) is read as if they did not.

Validation stores nothing and never trusts the archive's own size claims beyond what it checks.
Every rejection is a ``PackageError`` whose message says what to change. This module must not
import Django or ``engine``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shlex
import shutil
import stat
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

#: Largest upload accepted (the file or the zip as sent), in bytes.
MAX_PACKAGE_BYTES = 5 * 1024 * 1024
#: Largest total size of a zip's files once unpacked, in bytes.
MAX_UNPACKED_BYTES = 25 * 1024 * 1024
#: Most entries (files and folders) in a zip.
MAX_ENTRIES = 500
#: Largest unpacked/compressed ratio of one zip entry and of the whole zip (zip bombs).
MAX_COMPRESSION_RATIO = 100
#: Entries smaller than this are exempt from the ratio check (tiny files compress oddly).
RATIO_EXEMPT_BYTES = 64 * 1024
#: Longest path inside a zip, in UTF-8 bytes, and deepest folder nesting.
MAX_PATH_BYTES = 255
MAX_PATH_DEPTH = 16
#: Name and largest size of the manifest.
MANIFEST_NAME = "bot.json"
MAX_MANIFEST_BYTES = 4096
#: Most extra arguments a manifest command may pass to the entry file.
MAX_COMMAND_ARGS = 16

#: Known runtimes and the source extension a single-file package uses for each.
RUNTIMES: dict[str, str] = {"python3": ".py", "node": ".js"}
_SINGLE_FILE = {ext: runtime for runtime, ext in RUNTIMES.items()}
_DEFAULT_ENTRIES = ("main.py", "main.js")
_UTF8_FLAG = 0x800


class PackageError(ValueError):
    """An upload that is not a valid bot package; the message says what to change."""


@dataclass(frozen=True)
class BotPackage:
    """A validated package. ``entry`` and ``files`` are POSIX paths relative to the package root.

    Invariant: ``entry`` is one of ``files``; ``runtime`` is a key of ``RUNTIMES``.
    """

    kind: str  # "py", "js" or "zip"
    runtime: str
    entry: str
    args: tuple[str, ...]
    files: tuple[str, ...]
    unpacked_bytes: int
    sha256: str

    @property
    def command(self) -> tuple[str, ...]:
        """The command as a bot author writes it: runtime, entry file, extra arguments."""
        return (self.runtime, self.entry, *self.args)


@dataclass(frozen=True)
class InstalledBot:
    """An uploaded bot unpacked on disk: what a confined runner needs to start it.

    Invariant: ``folder`` is absolute and holds the package's files (read-only to the bot);
    ``command`` is ``(runtime, entry, *args)`` with ``entry`` relative to ``folder``.
    Only confined runners accept it; the trusted runner refuses it.
    """

    folder: Path
    package: BotPackage

    @property
    def runtime(self) -> str:
        return self.package.runtime

    @property
    def command(self) -> tuple[str, ...]:
        return self.package.command


def inspect_package(data: bytes, filename: str) -> BotPackage:
    """Validate an upload named ``filename``; store nothing. Raises ``PackageError``.

    Every file of a zip is inflated once (bounded by its declared size, the total by
    ``MAX_UNPACKED_BYTES``), so a zip whose directory lies about sizes, or whose data is damaged
    (CRC), is refused at upload rather than on a worker."""
    kind, members = _read(data, filename)
    package = _describe(data, kind, members)
    if kind == "zip":
        for reader in members.values():
            reader()
    return package


def install_package(data: bytes, filename: str, dest: Path) -> InstalledBot:
    """Validate and unpack into ``dest`` (absent or empty), files 0644 and folders 0755.

    The folder appears complete or not at all (unpacked beside it, then renamed).
    """
    kind, members = _read(data, filename)
    package = _describe(data, kind, members)
    dest = Path(dest).absolute()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise FileExistsError(f"{dest} exists and is not an empty folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(mode=0o755)
    try:
        written = 0
        for name, content in members.items():
            target = staging.joinpath(*PurePosixPath(name).parts)
            target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            body = content()
            written += len(body)
            if written > MAX_UNPACKED_BYTES:  # the archive lied about its sizes
                raise PackageError(_too_big_unpacked())
            target.write_bytes(body)
            target.chmod(0o644)
        for folder in [staging, *(p for p in staging.rglob("*") if p.is_dir())]:
            folder.chmod(0o755)
        if dest.exists():
            dest.rmdir()
        staging.rename(dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return InstalledBot(folder=dest, package=package)


# --- reading -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Reader:
    """One file of the package: its declared size and its content on demand (inspecting does
    not unpack)."""

    size: int
    read: Callable[[], bytes]

    def __call__(self) -> bytes:
        return self.read()


_Members = dict[str, _Reader]


def _read(data: bytes, filename: str) -> tuple[str, _Members]:
    """The package kind and its files (path -> reader), after every check but the command's."""
    if not isinstance(data, bytes | bytearray):
        raise TypeError("data must be bytes")
    suffix = PurePosixPath(filename.replace("\\", "/")).suffix.lower()
    if len(data) > MAX_PACKAGE_BYTES:
        raise PackageError(
            f"the upload is {len(data):,} bytes; the limit is {MAX_PACKAGE_BYTES:,} bytes. "
            "Leave out data your bot does not need, or compress it in a .zip."
        )
    if not data:
        raise PackageError("the upload is empty (0 bytes): send the bot's source file or a .zip")
    if suffix in _SINGLE_FILE:
        _check_source(data, f"the {suffix} file")
        return suffix[1:], {"main" + suffix: _Reader(len(data), lambda: bytes(data))}
    if suffix == ".zip":
        return "zip", _read_zip(bytes(data))
    raise PackageError(
        f"unsupported file type {suffix or '(no extension)'!r} for {filename!r}: upload a .py file "
        "(run by python3), a .js file (run by node), or a .zip with a bot.json manifest"
    )


def _check_source(data: bytes, what: str) -> None:
    if not data.strip():
        raise PackageError(f"{what} is empty: it must contain the bot's source code")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PackageError(
            f"{what} is not UTF-8 text (invalid byte at offset {exc.start}); save it as UTF-8"
        ) from None
    if b"\x00" in data:
        raise PackageError(f"{what} contains NUL bytes: is it a binary file? Send source code")


def _read_zip(data: bytes) -> _Members:
    if not data.startswith(b"PK"):
        raise PackageError("the .zip file is not a zip archive (it does not start with 'PK')")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, UnicodeDecodeError, ValueError,
            NotImplementedError, EOFError) as exc:
        raise PackageError(f"the .zip file cannot be read as a zip archive: {exc}") from None
    if not infos:
        raise PackageError("the zip archive is empty: put your bot's files in it")
    if len(infos) > MAX_ENTRIES:
        raise PackageError(
            f"the zip has {len(infos)} entries; the limit is {MAX_ENTRIES}: leave out what the "
            "bot does not need"
        )
    files: dict[str, zipfile.ZipInfo] = {}
    folders: set[str] = set()
    seen: set[str] = set()
    total = 0
    compressed = 0
    for info in infos:
        name = _entry_name(info)
        if name in seen or name.rstrip("/") in seen:
            raise PackageError(f"the zip contains {name!r} twice: each path may appear once")
        seen.add(name.rstrip("/"))
        _check_entry_type(info, name)
        if info.flag_bits & 0x1:
            raise PackageError(f"{name!r} is encrypted: upload a zip without a password")
        if info.is_dir():
            folders.add(name.rstrip("/"))
            continue
        total += info.file_size
        compressed += info.compress_size
        if total > MAX_UNPACKED_BYTES:
            raise PackageError(_too_big_unpacked())
        if info.file_size > RATIO_EXEMPT_BYTES and (
            info.file_size > MAX_COMPRESSION_RATIO * max(info.compress_size, 1)
        ):
            raise PackageError(
                f"{name!r} compresses {info.file_size // max(info.compress_size, 1)}:1; the limit"
                f" is {MAX_COMPRESSION_RATIO}:1 (this looks like a zip bomb). Store such data "
                "uncompressed or generate it at start-up"
            )
        files[name] = info
    if total > RATIO_EXEMPT_BYTES and total > MAX_COMPRESSION_RATIO * max(compressed, 1):
        raise PackageError(
            f"the zip unpacks to {total:,} bytes from {compressed:,}: more than "
            f"{MAX_COMPRESSION_RATIO}:1 (this looks like a zip bomb)"
        )
    for name in files:
        if name in folders:
            raise PackageError(f"{name!r} is both a file and a folder in the zip")
        for parent in PurePosixPath(name).parents:
            if str(parent) in files:
                raise PackageError(f"{str(parent)!r} is a file but {name!r} is inside it")
    if not files:
        raise PackageError("the zip archive holds only folders: put your bot's files in it")
    prefix = _common_folder(files)

    def reader(info: zipfile.ZipInfo) -> _Reader:
        def read() -> bytes:
            try:
                with archive.open(info) as stream:
                    body = stream.read(info.file_size + 1)
            except Exception as exc:  # BadZipFile, zlib.error, lzma.LZMAError, EOFError, ...
                raise PackageError(f"{info.filename!r} cannot be unpacked: {exc}") from None
            if len(body) != info.file_size:
                raise PackageError(f"{info.filename!r} is damaged: its size does not match")
            return body

        return _Reader(info.file_size, read)

    return {name[len(prefix):]: reader(info) for name, info in files.items()}


def _entry_name(info: zipfile.ZipInfo) -> str:
    """The entry's path as UTF-8 text, checked to stay inside the package."""
    name = info.filename
    if not info.flag_bits & _UTF8_FLAG:
        # zipfile decoded the raw bytes as cp437; recover them and require UTF-8.
        try:
            name = name.encode("cp437").decode("utf-8")
        except UnicodeEncodeError:
            pass
        except UnicodeDecodeError:
            raise PackageError(
                f"a file name in the zip is not valid UTF-8 ({info.filename!r} as cp437): "
                "rename it with plain ASCII or UTF-8 characters"
            ) from None
    shown = repr(name)
    if not name or any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise PackageError(f"the zip has a file name with control characters: {shown}")
    if "\\" in name:
        raise PackageError(f"{shown} contains a backslash: use '/' between folders")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise PackageError(f"{shown} is an absolute path: paths in the zip must be relative")
    parts = name.rstrip("/").split("/")
    if ".." in parts:
        raise PackageError(f"{shown} contains '..': paths may not leave the package folder")
    if any(part in ("", ".") for part in parts):
        raise PackageError(f"{shown} has an empty or '.' path component: use plain relative paths")
    if len(name.encode()) > MAX_PATH_BYTES or len(parts) > MAX_PATH_DEPTH:
        raise PackageError(
            f"{shown} is too long or too deep (limits: {MAX_PATH_BYTES} bytes, "
            f"{MAX_PATH_DEPTH} folders)"
        )
    return name


def _check_entry_type(info: zipfile.ZipInfo, name: str) -> None:
    mode = info.external_attr >> 16
    if info.create_system == 3 and stat.S_IFMT(mode):  # a Unix file type is recorded
        if stat.S_ISLNK(mode):
            raise PackageError(f"{name!r} is a symbolic link: links are not allowed, add the file")
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise PackageError(f"{name!r} is not a regular file or folder (mode {oct(mode)})")


def _common_folder(files: dict[str, zipfile.ZipInfo]) -> str:
    """``"top/"`` when every file sits in one top folder and none at the root, else ``""``."""
    tops = {name.split("/", 1)[0] for name in files}
    if len(tops) == 1 and all("/" in name for name in files):
        top = tops.pop() + "/"
        if MANIFEST_NAME not in files and (top + MANIFEST_NAME in files or not any(
            entry in files for entry in _DEFAULT_ENTRIES
        )):
            return top
    return ""


def _too_big_unpacked() -> str:
    return (
        f"the zip unpacks to more than {MAX_UNPACKED_BYTES:,} bytes, the limit: leave out what the "
        "bot does not need"
    )


# --- the command ---------------------------------------------------------------------------------


def _describe(data: bytes, kind: str, members: _Members) -> BotPackage:
    digest = hashlib.sha256(data).hexdigest()
    if kind in ("py", "js"):
        entry = next(iter(members))
        return BotPackage(kind, _SINGLE_FILE["." + kind], entry, (), (entry,), len(data), digest)
    if MANIFEST_NAME in members:
        runtime, entry, args = _parse_manifest(members[MANIFEST_NAME](), members)
    else:
        found = [entry for entry in _DEFAULT_ENTRIES if entry in members]
        if len(found) != 1:
            raise PackageError(
                f"the zip has no {MANIFEST_NAME} at its root. Add one naming the command, e.g. "
                '{"command": "python3 main.py"} or {"command": "node main.js"}'
            )
        entry = found[0]
        runtime, args = _SINGLE_FILE[PurePosixPath(entry).suffix], ()
    entry_body = members[entry]()
    _check_source(entry_body, f"the entry file {entry!r}")
    unpacked = sum(reader.size for reader in members.values())
    return BotPackage("zip", runtime, entry, args, tuple(sorted(members)), unpacked, digest)


def _parse_manifest(body: bytes, members: _Members) -> tuple[str, str, tuple[str, ...]]:
    example = '{"command": "python3 main.py"}'
    if len(body) > MAX_MANIFEST_BYTES:
        raise PackageError(f"{MANIFEST_NAME} is over {MAX_MANIFEST_BYTES} bytes; it needs one line")
    try:
        manifest = json.loads(body.decode("utf-8"))
    except RecursionError:
        raise PackageError(f"{MANIFEST_NAME} is nested too deeply; write e.g. {example}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PackageError(
            f"{MANIFEST_NAME} is not valid JSON ({exc}); write e.g. {example}"
        ) from None
    if not isinstance(manifest, dict) or "command" not in manifest:
        raise PackageError(f'{MANIFEST_NAME} must be an object with a "command", e.g. {example}')
    unknown = sorted(set(manifest) - {"command"})
    if unknown:
        raise PackageError(f'{MANIFEST_NAME} has unknown keys {unknown}: only "command" is read')
    command = manifest["command"]
    if isinstance(command, str):
        try:
            words = shlex.split(command)
        except ValueError as exc:
            raise PackageError(f"{MANIFEST_NAME}: the command cannot be split ({exc})") from None
    elif isinstance(command, list) and all(isinstance(word, str) for word in command):
        words = list(command)
    else:
        raise PackageError(f'{MANIFEST_NAME}: "command" must be a string such as "python3 main.py"')
    if len(words) < 2:
        raise PackageError(
            f"{MANIFEST_NAME}: the command must be RUNTIME FILE [ARGS...], e.g. {example}"
        )
    runtime, entry, *args = words
    if runtime not in RUNTIMES:
        raise PackageError(
            f"{MANIFEST_NAME}: unknown runtime {runtime!r}; the command must start with one of "
            f"{sorted(RUNTIMES)}"
        )
    written = entry
    while entry.startswith("./"):  # normalised first: the check applies to what is run
        entry = entry[2:].lstrip("/")
    if written.startswith("-") or entry.startswith("-"):
        raise PackageError(
            f"{MANIFEST_NAME}: options for {runtime} are not allowed ({written!r}); the command "
            "must be RUNTIME FILE [ARGS...]"
        )
    if entry not in members:
        raise PackageError(
            f"{MANIFEST_NAME}: the entry file {entry!r} is not in the zip (files: "
            f"{', '.join(sorted(members)[:10])})"
        )
    if len(args) > MAX_COMMAND_ARGS or any(len(arg) > 256 or "\x00" in arg for arg in args):
        raise PackageError(
            f"{MANIFEST_NAME}: at most {MAX_COMMAND_ARGS} extra arguments of 256 characters each"
        )
    return runtime, entry, tuple(args)
