"""One build step as a stage: fingerprinted inputs, settings, code version, outputs, ``ensure()``.

A stage is up to date when the stamp it wrote after its last successful build records exactly
the fingerprints it would record now (every input file's sha256, the settings, the stage's
generator string and a digest of the source code it runs) and every output it declares exists.
``ensure()`` builds only when that is not so. The stamp is written last, atomically, so a build
that dies leaves the stage out of date, never falsely up to date.

A stage declares what it is in the build (:attr:`Stage.key`), the stages whose outputs it reads
by default (:attr:`Stage.upstream`) and where it writes by default
(:attr:`Stage.default_target`); the build order and every default path come from these
declarations (:func:`build_order`, :func:`default_target`). The code it runs is not listed by
hand: it is every module of the package that the stage's class imports, followed through their
imports (:func:`stage_modules`).
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import inspect
import json
import textwrap
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from nutrireason import __version__
from nutrireason.errors import NutriReasonError
from nutrireason.paths import builds_dir
from nutrireason.storage import check_target_folder, input_fingerprints, write_json_atomic

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
PACKAGE = PACKAGE_ROOT.name


def module_file(module: str, root: Path | None = None) -> Path | None:
    """The source file of a ``nutrireason`` module (a package's ``__init__.py``), or None."""
    root = root or PACKAGE_ROOT
    parts = module.split(".")[1:]
    path = root.joinpath(*parts)
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if parts and candidate.is_file():
            return candidate
    return root / "__init__.py" if not parts else None


def imported_by(source: str, package: str) -> set[str]:
    """The ``nutrireason`` modules a piece of source in ``package`` imports, at module level
    or inside a function (``from nutrireason.x import y`` counts both ``nutrireason.x`` and,
    when it is a module, ``nutrireason.x.y``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            base = base[:len(base) - node.level + 1] if node.level else []
            name = ".".join([*base, *filter(None, (node.module or "").split("."))])
            if name.split(".")[0] == PACKAGE:
                found.add(name)
                found.update(f"{name}.{a.name}" for a in node.names)
    return found


def module_closure(start: tuple[str, ...], root: Path | None = None) -> tuple[Path, ...]:
    """The source files of ``start`` and of every ``nutrireason`` module they import,
    followed through their imports (a package's ``__init__.py`` included), sorted."""
    return _closure(start, root or PACKAGE_ROOT)


@lru_cache(maxsize=64)
def _closure(start: tuple[str, ...], root: Path) -> tuple[Path, ...]:
    seen: dict[str, Path] = {}
    pending = list(start)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        path = module_file(name, root)
        if path is None:  # a name imported from a module, not a module
            continue
        seen[name] = path
        parts = name.split(".")
        parents = [".".join(parts[:i]) for i in range(1, len(parts))]
        package = name if path.name == "__init__.py" else ".".join(parts[:-1])
        pending += parents + sorted(imported_by(path.read_text(encoding="utf-8"), package))
    return tuple(sorted(set(seen.values())))


PRESENTATION = ("show", "summary")  # methods that only print: their imports make no output


def stage_modules(stage: type[Stage]) -> tuple[str, ...]:
    """The ``nutrireason`` modules a stage's class imports in every method but those that
    only print (:data:`PRESENTATION`), and the module that names its generator."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(stage)))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            node.body = [item for item in node.body if not (
                isinstance(item, ast.FunctionDef) and item.name in PRESENTATION)]
    names = imported_by(ast.unparse(tree), stage.__module__.rpartition(".")[0])
    return tuple(sorted(names | ({stage.generator_of} if stage.generator_of else set())))


def stage_files(stage: type[Stage], root: Path | None = None) -> tuple[Path, ...]:
    """The source files a stage runs: the file that defines it (its helpers included) and
    every module of :func:`stage_modules`, followed through their imports."""
    root = root or PACKAGE_ROOT
    own = module_file(stage.__module__, root)
    return tuple(sorted({*module_closure(stage_modules(stage), root),
                         *([own] if own is not None else [])}))


def code_fingerprint(files: tuple[Path, ...], root: Path | None = None) -> str:
    """sha256 over ``files`` (paths and bytes; the package version first), so a change in any
    code a stage runs makes it stale."""
    root = root or PACKAGE_ROOT
    digest = hashlib.sha256(__version__.encode())
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode())
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


STAGES: dict[str, type[Stage]] = {}  # every declared stage by key, in declaration order
# the module whose import declares the built-in stages, imported on the first lookup (as the
# built-in benchmarks and methods are)
STAGE_MODULES = ("nutrireason.pipeline.stages",)


def declared_stages() -> dict[str, type[Stage]]:
    """Every declared stage by key: the built-in ones first, then those the registered
    benchmarks' modules declare (a benchmark package declares its build stage beside its
    spec)."""
    from nutrireason.schema import benchmark_names

    for module in STAGE_MODULES:
        importlib.import_module(module)
    benchmark_names()
    return STAGES


class Stage(ABC):
    """A build step. Subclasses say what they read, what they write and how to build, and
    declare where they sit in the build: ``key``, ``upstream`` (the keys of the stages whose
    outputs they read by default) and ``default_target`` (their output under the data home's
    ``builds/``; for a stage that builds a registered ``benchmark``, its spec's ``build_dir``).
    A subclass with a ``key`` is registered in :data:`STAGES`."""

    name: str = ""  # what the demo calls the step
    label: str = ""  # how messages name its output
    generator_of: str = ""  # the module whose GENERATOR names the build's output version
    key: ClassVar[str] = ""
    upstream: ClassVar[tuple[str, ...]] = ()
    default_target: ClassVar[str] = ""
    benchmark: ClassVar[str] = ""  # a registered benchmark it builds: its spec's build_dir

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("key"):
            STAGES[cls.key] = cls

    @property
    def target(self) -> Path:
        """Where the build writes: a target given to this stage, else its ``out`` setting,
        else its declared default target."""
        return getattr(self, "_target", None) or getattr(self, "out", None) or \
            default_target(self.key)

    @target.setter
    def target(self, value: Path) -> None:
        self._target = value

    @property
    def generator(self) -> str:
        """The build's generator string (``GENERATOR`` of :attr:`generator_of`; "" for a
        stage without one)."""
        if not self.generator_of:
            return ""
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
        return Path(self.target) / "stage.json"

    @abstractmethod
    def build(self) -> Any:
        """Do the work; return whatever the caller wants to show."""

    def summary(self) -> Any:
        """What the last build made, read back from its outputs (shown when up to date)."""
        return None

    def show(self, value: Any, built: bool) -> None:
        """Print what the build made (``value``: the build's value, or :meth:`summary` when
        the stage was up to date); a stage with nothing to say prints nothing."""
        return None

    def stamp(self) -> dict[str, Any]:
        """The fingerprints a build made now would record."""
        inputs = self.inputs()
        return {"stage": self.name, "generator": self.generator,
                "code": code_fingerprint(stage_files(type(self))),
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
        target = Path(self.target)
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


def default_target(key: str) -> Path:
    """Where stage ``key`` writes by default: its ``default_target`` (or its benchmark's
    build folder) under ``builds/``."""
    stages = declared_stages()
    if key not in stages:
        raise NutriReasonError(f"no stage declares the key {key!r}; declared: "
                               f"{', '.join(stages) or 'none'}")
    declared = stages[key]
    if declared.benchmark:
        from nutrireason.schema import get_benchmark

        return builds_dir() / get_benchmark(declared.benchmark).build_dir
    return builds_dir() / declared.default_target


def upstream_file(key: str, folder: Path | None, name: str) -> Path:
    """The file ``name`` in ``folder``, or in stage ``key``'s default target when no folder is
    given (what a stage reads from the stage it builds on)."""
    return (folder or default_target(key)) / name


RECIPES_FILE = "recipes.jsonl"  # the recipe build's corpus: one row per recipe


def recipe_corpus(folder: Path | None = None) -> Path:
    """The recipe build's corpus in ``folder`` (default: the recipe stage's target)."""
    return upstream_file("recipes", folder, RECIPES_FILE)


def build_order() -> list[type[Stage]]:
    """Every declared stage after the stages it builds on; stages that could go in either
    order keep their declaration order. An upstream key no stage declares, or a loop, is an
    error naming it."""
    order: list[type[Stage]] = []
    placed: set[str] = set()
    waiting = dict(declared_stages())
    for cls in waiting.values():
        unknown = [key for key in cls.upstream if key not in waiting]
        if unknown:
            raise NutriReasonError(f"stage {cls.key!r} builds on {unknown}, which no stage "
                                   "declares")
    while waiting:
        ready = next((key for key, cls in waiting.items() if set(cls.upstream) <= placed), None)
        if ready is None:
            raise NutriReasonError(f"the stages {sorted(waiting)} build on each other in a loop")
        order.append(waiting.pop(ready))
        placed.add(ready)
    return order


def build_stages(**settings: Any) -> list[Stage]:
    """One stage of each declared kind, in :func:`build_order`, with their defaults; a
    setting is passed to the stages that have a field of that name."""
    stages = []
    for cls in build_order():
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        stages.append(cls(**{k: v for k, v in settings.items() if k in names}))
    return stages
