"""Staging: a bot's files in a neutral folder any uid can reach, reused by content, swept when
unused; bwrap itself and the runtime's libraries likewise."""

from __future__ import annotations

import os
import time
from pathlib import Path

from sandbox import install_package
from sandbox.staging import staged_folder, staged_libraries, sweep

BOT = b"print('hi')\n"


def test_a_bot_is_staged_once_by_content_and_reachable(tmp_path: Path):
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    first = install_package(BOT, "bot.py", private / "a")
    second = install_package(BOT, "bot.py", private / "b")
    root = tmp_path / "stage" / "bots"
    staged = staged_folder(first, root)
    assert staged_folder(second, root) == staged  # same content, same folder
    assert (staged / "main.py").read_bytes() == BOT
    assert os.stat(staged / "main.py").st_mode & 0o777 == 0o644
    for folder in (staged, root, root.parent):
        assert os.stat(folder).st_mode & 0o777 == 0o755
    assert str(private) not in str(staged)


def test_unused_staged_bots_are_swept(tmp_path: Path):
    root = tmp_path / "bots"
    old = staged_folder(install_package(BOT, "bot.py", tmp_path / "old"), root)
    fresh = staged_folder(install_package(b"print(2)\n", "bot.py", tmp_path / "new"), root)
    week_ago = time.time() - 8 * 24 * 3600
    os.utime(old, (week_ago, week_ago))
    assert sweep(root, force=True) == 1
    assert not old.exists() and fresh.exists()


def test_library_folder_holds_only_the_given_libraries(tmp_path: Path):
    source = tmp_path / "lib"
    source.mkdir()
    for name in ("liba.so.1", "libb.so.2", "libunused.so"):
        (source / name).write_bytes(name.encode())
    libraries = tuple((f"/usr/lib/{name}", str(source / name)) for name in ("liba.so.1",
                                                                            "libb.so.2"))
    staged = Path(staged_libraries(libraries, tmp_path / "stage"))
    assert sorted(os.listdir(staged)) == ["liba.so.1", "libb.so.2"]
    assert staged_libraries(libraries, tmp_path / "stage") == str(staged)
    (source / "liba.so.1").write_bytes(b"upgraded")  # the host upgrades a library: a new folder
    os.utime(source / "liba.so.1", (1, 1))
    assert staged_libraries(libraries, tmp_path / "stage") != str(staged)
