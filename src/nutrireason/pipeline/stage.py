"""One build step as a stage: fingerprinted inputs, settings, code version, outputs, ``ensure()``.

A stage is up to date when the stamp it wrote after its last successful build records exactly
the fingerprints it would record now (every input file's sha256, the settings, the stage's
generator string and a digest of the source code it runs) and every output it declares exists.
``ensure()`` builds only when that is not so. The stamp is written last, atomically, so a build
that dies leaves the stage out of date, never falsely up to date.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from nutrireason import __version__
from nutrireason.io import check_target_folder, input_fingerprints, write_json_atomic

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=32)
def code_fingerprint(packages: tuple[str, ...]) -> str:
    """sha256 over the source files (``*.py`` and packaged data) of ``packages`` (folders or
    modules of :mod:`nutrireason`), so a code change makes the stages that run it stale."""
    digest = hashlib.sha256(__version__.encode())
    for name in sorted(packages):
        root = PACKAGE_ROOT / name
        files = sorted(root.rglob("*.py")) if root.is_dir() else [root.with_suffix(".py")]
        for path in files:
            digest.update(path.relative_to(PACKAGE_ROOT).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


@dataclass
class StageResult:
    """What ``ensure()`` did: ``built`` or ``up to date``, the build's value (None when
    skipped), the seconds it took."""

    name: str
    status: str
    value: Any
    seconds: float

    @property
    def built(self) -> bool:
        return self.status == "built"


class Stage(ABC):
    """A build step. Subclasses say what they read, what they write and how to build."""

    name: str = ""  # what the demo calls the step
    label: str = ""  # how messages name its output
    generator_of: str = ""  # the module whose GENERATOR names the build's output version
    code: tuple[str, ...] = ()  # packages whose source the stage runs

    @property
    def generator(self) -> str:
        """The build's generator string (``GENERATOR`` of :attr:`generator_of`)."""
        return str(getattr(importlib.import_module(self.generator_of), "GENERATOR", ""))

    @abstractmethod
    def inputs(self) -> list[Path]:
        """Every file the build reads (missing ones make the stage fail with a hint)."""

    def settings(self) -> dict[str, Any]:
        """The settings that change what the build writes."""
        return {}

    @abstractmethod
    def outputs(self) -> list[Path]:
        """The files the build writes."""

    @property
    def stamp_path(self) -> Path:
        """Where the stage records what its last successful build was made from
        (``stage.json`` in its output folder, ``target``)."""
        return Path(self.target) / "stage.json"  # type: ignore[attr-defined]

    @abstractmethod
    def build(self) -> Any:
        """Do the work; return whatever the caller wants to show."""

    def stamp(self) -> dict[str, Any]:
        """The fingerprints a build made now would record."""
        inputs = self.inputs()
        return {"stage": self.name, "generator": self.generator,
                "code": code_fingerprint(tuple(self.code)),
                "inputs": input_fingerprints([p for p in inputs if p.is_file()]),
                "missing_inputs": sorted(str(p) for p in inputs if not p.is_file()),
                "settings": json.loads(json.dumps(self.settings(), default=str))}

    def up_to_date(self, stamp: dict[str, Any] | None = None) -> bool:
        """True when the last build's stamp equals today's (``stamp``, computed when not
        given) and every output exists."""
        if not self.stamp_path.is_file() or not all(p.exists() for p in self.outputs()):
            return False
        try:
            recorded = json.loads(self.stamp_path.read_text(encoding="utf-8"))
        except ValueError:
            return False
        return recorded == (stamp if stamp is not None else self.stamp())

    def check_target(self) -> None:
        """Refuse an ``--out`` folder that holds files this stage did not write (unless the
        stage's ``overwrite`` is set); the data home's own build folders are the toolkit's."""
        target = Path(self.target)  # type: ignore[attr-defined]
        if getattr(self, "out", None) is None or self.stamp_path.parent != target:
            return
        check_target_folder(target, bool(getattr(self, "overwrite", False)),
                            earlier=self._wrote,
                            expected="a new or empty folder, an earlier build of this stage, "
                                     "or --overwrite to write into it anyway")

    def _wrote(self, folder: Path) -> bool:
        """``folder`` holds this stage's earlier build (its stamp or one of its outputs)."""
        return self.stamp_path.is_file() or any(p.exists() for p in self.outputs())

    def ensure(self, force: bool = False) -> StageResult:
        """Build unless up to date (or ``force``); then record the stamp. An ``--out`` folder
        that holds other files is refused first (:meth:`check_target`)."""
        started = time.perf_counter()
        self.check_target()
        stamp = self.stamp()  # the inputs are hashed once: a build does not change them
        if not force and self.up_to_date(stamp):
            return StageResult(self.name, "up to date", None, time.perf_counter() - started)
        value = self.build()
        write_json_atomic(self.stamp_path, stamp)
        return StageResult(self.name, "built", value, time.perf_counter() - started)
