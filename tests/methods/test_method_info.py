"""Methods declare what they are (``MethodInfo``); the run policy, the demo's evaluation and
the lm-eval export read the declarations instead of lists of names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nutrireason.methods import base
from nutrireason.methods.base import MethodInfo, PromptMethod, declared, method_info, method_infos
from nutrireason.runs.policy import asks_model
from nutrireason.schema import benchmark_names

SRC = Path(__file__).resolve().parents[2] / "src" / "nutrireason"
READERS = ("runs/policy.py", "pipeline/evaluate.py", "interop/lm_eval_export.py")


def test_every_method_declares_a_registered_benchmark_or_none():
    infos = method_infos()
    assert {"plain", "tog", "oracle", "fam-baseline", "fam-reference", "prompt"} <= infos.keys()
    assert all(info.benchmark in ("", *benchmark_names()) for info in infos.values())
    # a method that asks no model is a reference here, and is never exported
    for name, info in infos.items():
        if not info.needs_model:
            assert info.reference and not info.exported and info.left_out, name


@pytest.mark.parametrize(("method", "asks"), [
    ("oracle", False), ("fam-reference", False), ("tog:width=2", True), ("plain", True),
    ("fam-cot-ki[image]", True), ("no-such-method", True)])
def test_the_policy_asks_the_declaration_whether_a_model_is_needed(method, asks):
    assert asks_model(method) is asks


def test_the_demo_and_the_export_take_the_declared_methods():
    from nutrireason.interop.lm_eval_export import FAM_MODES, LEFT_OUT, NGQA_METHODS
    from nutrireason.pipeline.evaluate import DEMO_METHODS, DEMO_RANK_MODES
    from nutrireason.pipeline.evaluate import FAM_MODES as DEMO_FAM

    assert DEMO_METHODS == ["plain", "kaping", "cot-zero", "cot-bag", "tog"]
    assert DEMO_FAM == ["fam-baseline", "fam-cot", "fam-ki", "fam-cot-ki"]
    assert DEMO_RANK_MODES == ["fam-baseline"]
    assert NGQA_METHODS == ("plain", "kaping", "cot-zero", "cot-bag")
    assert FAM_MODES == ("baseline", "cot", "ki", "cot-ki")
    assert LEFT_OUT["tog"].startswith("Think-on-Graph") and "oracle" in LEFT_OUT
    images = next(names for names, why in LEFT_OUT.items() if why == "image input")
    assert "fam-baseline[image]" in images and "fam-cot[text+image]" in images


def test_a_new_method_is_found_by_its_declaration(monkeypatch):
    monkeypatch.setattr(base, "_METHODS", dict(base._METHODS))
    monkeypatch.setattr(base, "_INFO", dict(base._INFO))
    base.register_method("ngqa-echo", PromptMethod,
                         MethodInfo(benchmark="ngqa", demo=True, exported=True))
    assert declared("ngqa", demo=True)[-1] == "ngqa-echo"
    assert method_info("ngqa-echo:k=1").exported
    # a class registered without one declares the defaults: it asks a model, for any prompts
    base.register_method("plain-prompt", PromptMethod)
    assert method_info("plain-prompt") == MethodInfo()


def test_the_readers_list_no_method_names():
    names = set(method_infos()) - {"prompt"}  # also the field a prompt file's items carry
    found = []
    for where in READERS:
        tree = ast.parse((SRC / where).read_text(encoding="utf-8"))
        found += [f"{where}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and node.value in names]
    assert not found, found


def test_another_package_registers_methods_through_an_entry_point(monkeypatch, tmp_path):
    """A ``nutrireason.methods`` entry point is loaded once, on the first lookup of a method
    no built-in module registers; its module registers with a declaration."""
    module = tmp_path / "outside_methods.py"
    module.write_text(
        "from nutrireason.methods.base import MethodInfo, PromptMethod, register_method\n"
        "register_method('outside-echo', PromptMethod, MethodInfo(benchmark='ngqa'))\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    from importlib.metadata import EntryPoint

    point = EntryPoint("outside", "outside_methods", "nutrireason.methods")
    asked = []

    def fake_entry_points(group: str) -> list[EntryPoint]:
        asked.append(group)
        return [point] if group == "nutrireason.methods" else []

    monkeypatch.setattr(base, "entry_points", fake_entry_points)
    monkeypatch.setattr(base, "_plugins_loaded", False)
    monkeypatch.setattr(base, "_METHODS", dict(base._METHODS))
    monkeypatch.setattr(base, "_INFO", dict(base._INFO))
    assert method_info("outside-echo") == MethodInfo(benchmark="ngqa")
    assert base.get_method("outside-echo").name == "prompt"  # the class's own name
    method_infos()
    assert asked == ["nutrireason.methods"]  # loaded once


def test_a_benchmark_package_s_methods_are_found_through_its_registration(monkeypatch,
                                                                           tmp_path):
    """A benchmark module that registers its methods beside its spec: the first method lookup
    loads the registered benchmarks, so its methods are found with no other registration."""
    import nutrireason.schema as schema

    module = tmp_path / "package_benchmark.py"
    module.write_text(
        "from nutrireason.methods.base import MethodInfo, PromptMethod, register_method\n"
        "from nutrireason.schema import BenchmarkSpec, TaskSpec, register_benchmark\n"
        "register_method('package-plain', PromptMethod,\n"
        "                MethodInfo(benchmark='package', default=True))\n"
        "@register_benchmark('package')\n"
        "def spec():\n"
        "    return BenchmarkSpec(name='package', title='Package', build_dir='package',\n"
        "        tasks=(TaskSpec(name='package_task', option='t', label='T', file='t.jsonl',\n"
        "                        answer='yes_no'),))\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(schema, "_BENCHMARK_MODULES",
                        (*schema._BENCHMARK_MODULES, "package_benchmark"))
    monkeypatch.setattr(schema, "_loaded", False)
    monkeypatch.setattr(schema, "_FACTORIES", dict(schema._FACTORIES))
    monkeypatch.setattr(schema, "_SPECS", dict(schema._SPECS))
    monkeypatch.setattr(schema, "_TASK_OWNER", {})
    monkeypatch.setattr(schema, "_META_KEYS", [])
    monkeypatch.setattr(base, "_plugins_loaded", False)
    monkeypatch.setattr(base, "_METHODS", dict(base._METHODS))
    monkeypatch.setattr(base, "_INFO", dict(base._INFO))
    assert declared("package", default=True) == ["package-plain"]
    assert "package" in schema.benchmark_names()
