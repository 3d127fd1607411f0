"""Package validation: every rejection is a PackageError saying what to change; installing writes
exactly the package's files, read-only to others."""

from __future__ import annotations

import io
import json
import os
import stat
import zipfile
from pathlib import Path

import pytest

from sandbox import PackageError, inspect_package, install_package
from sandbox import package as pkg

BOT = b"import sys\nprint('hello')\n"


def make_zip(entries: dict[str, bytes], *, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, body in entries.items():
            archive.writestr(name, body)
    return buffer.getvalue()


def zip_with_info(info: zipfile.ZipInfo, body: bytes = b"x") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.json", b'{"command": "python3 main.py"}')
        archive.writestr("main.py", BOT)
        archive.writestr(info, body)
    return buffer.getvalue()


def rejects(data: bytes, filename: str, *words: str) -> str:
    with pytest.raises(PackageError) as caught:
        inspect_package(data, filename)
    message = str(caught.value)
    for word in words:
        assert word in message, message
    return message


# --- accepted ------------------------------------------------------------------------------------


def test_single_python_file():
    package = inspect_package(BOT, "My Bot.py")
    assert (package.kind, package.runtime, package.command) == ("py", "python3",
                                                               ("python3", "main.py"))
    assert package.files == ("main.py",)


def test_single_javascript_file():
    assert inspect_package(b"console.log(1)\n", "bot.JS").command == ("node", "main.js")


def test_zip_with_manifest_and_arguments():
    data = make_zip({"bot.json": b'{"command": "node ./src/index.js --fast"}',
                     "src/index.js": b"console.log(1)\n", "src/lib.js": b"module.exports = 1\n"})
    package = inspect_package(data, "bot.zip")
    assert package.command == ("node", "src/index.js", "--fast")
    assert package.files == ("bot.json", "src/index.js", "src/lib.js")


def test_zip_with_list_command_and_folder_entries():
    data = make_zip({"lib/": b"", "bot.json": b'{"command": ["python3", "run.py"]}',
                     "run.py": BOT, "lib/util.py": b"X = 1\n"})
    assert inspect_package(data, "b.zip").command == ("python3", "run.py")


def test_zip_without_manifest_uses_main():
    assert inspect_package(make_zip({"main.py": BOT, "data.txt": b"1"}), "b.zip").entry == "main.py"


def test_zip_of_one_top_folder_is_unwrapped():
    data = make_zip({"mybot/bot.json": b'{"command": "python3 main.py"}', "mybot/main.py": BOT})
    assert inspect_package(data, "b.zip").files == ("bot.json", "main.py")


def test_install_writes_files_readable_by_others(tmp_path: Path):
    data = make_zip({"bot.json": b'{"command": "python3 main.py"}', "main.py": BOT,
                     "pkg/helper.py": b"X = 1\n"})
    bot = install_package(data, "b.zip", tmp_path / "v1")
    assert bot.folder == tmp_path / "v1"
    assert (bot.folder / "pkg" / "helper.py").read_bytes() == b"X = 1\n"
    assert stat.S_IMODE((bot.folder / "main.py").stat().st_mode) == 0o644
    assert stat.S_IMODE((bot.folder / "pkg").stat().st_mode) == 0o755
    assert sorted(os.listdir(tmp_path)) == ["v1"]  # no staging folder left
    with pytest.raises(FileExistsError):
        install_package(data, "b.zip", tmp_path / "v1")


def test_install_rejects_before_writing(tmp_path: Path):
    with pytest.raises(PackageError):
        install_package(b"", "b.py", tmp_path / "v1")
    assert list(tmp_path.iterdir()) == []


# --- rejected ------------------------------------------------------------------------------------


def test_empty_upload():
    rejects(b"", "bot.py", "empty")


def test_blank_source():
    rejects(b"  \n\n", "bot.py", "empty")


def test_oversize_upload():
    rejects(b"#" * (pkg.MAX_PACKAGE_BYTES + 1), "bot.py", "limit", f"{pkg.MAX_PACKAGE_BYTES:,}")


def test_unknown_extension():
    rejects(BOT, "bot.rb", "'.rb'", ".py", ".js", ".zip")


def test_random_bytes_as_zip():
    rejects(os.urandom(4096), "bot.zip", "not a zip")
    rejects(b"PK" + os.urandom(4096), "bot.zip", "cannot be read as a zip")


def test_binary_as_source():
    rejects(b"\x7fELF\x02\x01\x01\x00\xff\xfe", "bot.py", "not UTF-8")
    rejects(b"print(1)\x00\x00", "bot.py", "NUL")


def test_empty_zip():
    rejects(make_zip({}), "bot.zip", "empty")


def test_zip_bomb_by_ratio():
    data = make_zip({"main.py": BOT, "zeros.bin": b"\0" * (10 * 1024 * 1024)})
    rejects(data, "bot.zip", "zip bomb", "zeros.bin")


def test_zip_over_unpacked_size():
    blob = os.urandom(1024 * 1024)  # incompressible: not a ratio problem
    entries = {f"d{i}.bin": blob for i in range(pkg.MAX_UNPACKED_BYTES // len(blob) + 1)}
    data = make_zip({"main.py": BOT, **entries}, method=zipfile.ZIP_STORED)
    if len(data) > pkg.MAX_PACKAGE_BYTES:  # caught even earlier, by the upload cap
        rejects(data, "bot.zip", "limit")
    else:
        rejects(data, "bot.zip", "unpacks to more than")


def test_zip_header_lying_about_size(tmp_path: Path, monkeypatch):
    # declared sizes are checked before unpacking, and the bytes written are counted again
    monkeypatch.setattr(pkg, "MAX_UNPACKED_BYTES", 100)
    data = make_zip({"main.py": BOT, "big.txt": os.urandom(200)}, method=zipfile.ZIP_STORED)
    rejects(data, "bot.zip", "unpacks to more than")


def test_too_many_entries():
    rejects(make_zip({f"f{i}.py": b"1" for i in range(pkg.MAX_ENTRIES + 1)}), "b.zip", "entries")


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("../evil.py", "'..'"),
        ("lib/../../evil.py", "'..'"),
        ("/etc/passwd", "absolute"),
        ("C:/evil.py", "absolute"),
        ("lib\\evil.py", "backslash"),
        ("lib//evil.py", "empty"),
        ("./evil.py", "'.'"),
        ("bad\nname.py", "control characters"),
        ("a/" * 20 + "deep.py", "too deep"),
    ],
)
def test_bad_paths(name: str, words: str):
    rejects(zip_with_info(zipfile.ZipInfo(name)), "bot.zip", words)


def test_symlink():
    info = zipfile.ZipInfo("link.py")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    rejects(zip_with_info(info, b"/etc/passwd"), "bot.zip", "symbolic link")


def test_device_file():
    info = zipfile.ZipInfo("dev")
    info.create_system = 3
    info.external_attr = (stat.S_IFCHR | 0o666) << 16
    rejects(zip_with_info(info), "bot.zip", "not a regular file")


def test_non_utf8_name():
    data = zip_with_info(zipfile.ZipInfo("cafX.py"))
    data = data.replace(b"cafX.py", b"caf\xe9.py")  # Latin-1, no UTF-8 flag: not UTF-8
    rejects(data, "bot.zip", "not valid UTF-8")


def test_utf8_name_is_fine():
    data = make_zip({"main.py": BOT, "données.txt": b"1"})
    assert "données.txt" in inspect_package(data, "b.zip").files


def test_duplicate_entries():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, pytest.warns(UserWarning):
        archive.writestr("main.py", BOT)
        archive.writestr("main.py", BOT)
    rejects(buffer.getvalue(), "b.zip", "twice")


def test_encrypted_entry():
    data = bytearray(zip_with_info(zipfile.ZipInfo("secret.py")))
    central = data.rindex(b"PK\x01\x02")  # the last central directory record: secret.py
    assert data[central + 46:central + 55] == b"secret.py"
    data[central + 8] |= 0x1  # general purpose flag bit 0: encrypted
    rejects(bytes(data), "bot.zip", "encrypted")


@pytest.mark.parametrize(
    ("manifest", "words"),
    [
        (b"{not json", "not valid JSON"),
        (b'["python3", "main.py"]', 'must be an object with a "command"'),
        (b'{"cmd": "python3 main.py"}', '"command"'),
        (b'{"command": "python3 main.py", "version": 2}', "unknown keys"),
        (b'{"command": "ruby main.rb"}', "unknown runtime 'ruby'"),
        (b'{"command": "bash -c evil"}', "unknown runtime 'bash'"),
        (b'{"command": "python3"}', "RUNTIME FILE"),
        (b'{"command": "python3 -c print(1)"}', "options"),
        (b'{"command": "python3 missing.py"}', "'missing.py' is not in the zip"),
        (b'{"command": "python3 ../main.py"}', "is not in the zip"),
        (b'{"command": "python3 /bot/main.py"}', "is not in the zip"),
        (b'{"command": 42}', "must be a string"),
        (b'{"command": "python3 \'main.py"}', "cannot be split"),
    ],
)
def test_bad_manifest(manifest: bytes, words: str):
    rejects(make_zip({"bot.json": manifest, "main.py": BOT}), "bot.zip", words)


@pytest.mark.parametrize("command", ["python3 ./-c", "python3 .//-c", "python3 ././-m",
                                     "node ./--eval"])
def test_options_hidden_behind_dot_slash_are_refused(command: str):
    """The no-options check runs on the normalised entry: a file named ``-c`` in the zip and a
    command ``python3 ./-c`` would otherwise run ``python3 -c <args>``."""
    entry = command.split()[1].lstrip("./")
    manifest = json.dumps({"command": command + " print(1)"}).encode()
    rejects(make_zip({"bot.json": manifest, entry: BOT, "main.py": BOT}), "bot.zip", "options")


def test_zip_without_manifest_or_main():
    rejects(make_zip({"bot.py": BOT}), "bot.zip", "no bot.json", '"command"')


def test_empty_entry_file():
    data = make_zip({"bot.json": b'{"command": "python3 main.py"}', "main.py": b""})
    rejects(data, "bot.zip", "'main.py' is empty")


def test_file_and_folder_clash():
    rejects(make_zip({"main.py": BOT, "lib": b"1", "lib/x.py": b"1"}), "b.zip", "is a file")
