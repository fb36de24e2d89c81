"""io.atomic_folder: a folder is filled beside its target and put in place whole (merge,
export hf and export lm-eval write their folders through it)."""

from __future__ import annotations

import os

import pytest

from nutrireason.storage import atomic_folder, dir_mode


def names(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_new_folder_gets_the_umask_mode_not_mkdtemp_0700(tmp_path):
    with atomic_folder(tmp_path / "out") as folder:
        (folder / "a.txt").write_text("a")
    assert names(tmp_path) == ["out"] and names(tmp_path / "out") == ["a.txt"]
    assert (tmp_path / "out").stat().st_mode & 0o777 == dir_mode()
    old = os.umask(0o077)
    try:
        with atomic_folder(tmp_path / "private") as folder:
            pass
        assert (tmp_path / "private").stat().st_mode & 0o777 == 0o700
    finally:
        os.umask(old)


def test_an_existing_folder_is_replaced_whole(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old.txt").write_text("old")
    with atomic_folder(tmp_path / "out") as folder:
        (folder / "new.txt").write_text("new")
    assert names(tmp_path) == ["out"] and names(tmp_path / "out") == ["new.txt"]


def test_an_error_leaves_the_target_as_it_was_and_nothing_beside_it(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old.txt").write_text("old")
    with pytest.raises(RuntimeError), atomic_folder(tmp_path / "out") as folder:
        (folder / "half.txt").write_text("half")
        raise RuntimeError("killed half way")
    assert names(tmp_path) == ["out"] and names(tmp_path / "out") == ["old.txt"]
