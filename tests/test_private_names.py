"""No module of the package uses another module's private names: ``from X import _name`` and
``X._name`` on an imported module both fail here, naming the file and line. A name shared
between modules is public (no leading underscore); dunder names are exempt."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "nutrireason"


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def absolute(node: ast.ImportFrom, path: Path) -> str:
    """The module an ``from ... import`` names, with relative imports resolved."""
    if not node.level:
        return node.module or ""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def borrowed(path: Path, source: str) -> list[str]:
    """``file:line name`` for each private name this module takes from another module."""
    tree, found, modules = ast.parse(source), [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = absolute(node, path)
            if target.startswith("nutrireason") and target != module_name(path):
                found += [f"{path.name}:{node.lineno} {a.name} from {target}"
                          for a in node.names if private(a.name)]
                modules |= {a.asname or a.name for a in node.names if not private(a.name)}
        elif isinstance(node, ast.Import):
            modules |= {(a.asname or a.name).split(".")[0] for a in node.names
                        if a.name.startswith("nutrireason")}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr) and \
                isinstance(node.value, ast.Name) and node.value.id in modules:
            found.append(f"{path.name}:{node.lineno} {node.value.id}.{node.attr}")
    return found


def test_no_module_imports_a_private_name_of_another():
    found = [f"{path.relative_to(SRC)}: {hit}" for path in sorted(SRC.rglob("*.py"))
             for hit in borrowed(path, path.read_text(encoding="utf-8"))]
    assert found == []


def test_the_check_finds_each_kind_of_borrowing():
    here = SRC / "review" / "human_app.py"
    source = ("from nutrireason.review.app import _one, add_security\n"
              "from .app import _two\n"
              "from nutrireason import review\n"
              "import nutrireason.standards.loader as loader\n"
              "x = loader._Strict\n"
              "y = review._hidden\n"
              "z = self._own\n"
              "from nutrireason.review.human_app import _mine\n")
    assert borrowed(here, source) == [
        "human_app.py:1 _one from nutrireason.review.app",
        "human_app.py:2 _two from nutrireason.review.app",
        "human_app.py:5 loader._Strict", "human_app.py:6 review._hidden"]
