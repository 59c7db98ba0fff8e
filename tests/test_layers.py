"""The package's layer order, enforced.

Each layer may import only from its own or lower layers (``docs/architecture.md``):

    warnings / device / constraints / time → layout / validation / features / nn → metrics / losses / datasets → training
    → base → scoring → estimators → evaluation / search → comparison / cli

Three checks: each layer imported in a fresh interpreter, on top of the layers below it
and nothing else of the package, loads no module of a higher layer; the package's import
graph (module-level and function-local imports alike) has no cycle between modules; no
function-local import of the package exists to hide one.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "temporal_xmodal"

#: Lowest first.  A name is a top-level module or subpackage of temporal_xmodal.
LAYERS = [
    ["_warnings", "_pipelines", "_docs", "_device", "_constraints", "time"],
    ["_sparse_input", "_input", "_stacking", "_validation", "features", "nn"],
    ["metrics", "losses", "datasets"],
    ["training"],
    ["base"],
    ["estimators"],
    ["scoring"],
    ["evaluation", "search"],
    ["comparison", "cli", "__main__"],
]
LAYER_OF = {name: i for i, names in enumerate(LAYERS) for name in names}


def _modules():
    """Every module of the package, as dotted names."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append((".".join(parts), path))
    return out


def _unit(module):
    """The layer unit of a dotted module name (None for the package root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_module_has_a_layer():
    units = {_unit(m) for m, _ in _modules()} - {None}
    assert units <= set(LAYER_OF), f"modules with no layer: {sorted(units - set(LAYER_OF))}"


def _imports(module, path):
    """(imported module, lineno, is_local) for each import of the package in a file."""
    tree = ast.parse(path.read_text())
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    local_nodes = {
        id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        for n in ast.walk(f)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            targets = [target]
            if node.module is None:  # from . import x: x may be a submodule
                targets = [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for t in targets:
            if t == "temporal_xmodal" or t.startswith("temporal_xmodal."):
                found.append((t, node.lineno, id(node) in local_nodes))
    return found


#: Modules allowed to import the package inside functions, and why: the command line reads
#: its arguments (and answers ``--help`` or an argument error) before it imports the stack
#: (torch included), which takes seconds on a busy machine.
DEFERRED_IMPORTS = {"temporal_xmodal.cli": "instant --help and argument errors",
                    "temporal_xmodal.comparison.estimate": "the estimate before torch's import"}


def test_no_function_local_import_of_the_package():
    local = [f"{m}:{line} imports {t}" for m, p in _modules()
             for t, line, is_local in _imports(m, p) if is_local and m not in DEFERRED_IMPORTS]
    assert not local, "function-local imports of the package:\n" + "\n".join(local)


def test_static_imports_follow_the_layers():
    wrong = []
    for module, path in _modules():
        here = _unit(module)
        if here is None:
            continue
        for target, line, _ in _imports(module, path):
            there = _unit(target)
            if there is not None and LAYER_OF.get(there, -1) > LAYER_OF[here]:
                wrong.append(f"{module}:{line} ({here}, layer {LAYER_OF[here]}) imports "
                             f"{target} ({there}, layer {LAYER_OF[there]})")
    assert not wrong, "imports against the layer order:\n" + "\n".join(wrong)


def test_no_import_cycle():
    known = {m for m, _ in _modules()}
    graph = {}
    for module, path in _modules():
        edges = set()
        for target, _, _ in _imports(module, path):
            while target not in known and "." in target:  # from pkg.mod import name
                target = target.rsplit(".", 1)[0]
            if target in known and target != module:
                edges.add(target)
        graph[module] = edges
    # A package __init__ importing its own submodules is how it re-exports; a submodule
    # that imports its own package's __init__ back is the cycle this test looks for.
    state, cycle = {}, []

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle.append(" → ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycle, "import cycles:\n" + "\n".join(cycle)


# The package root (``temporal_xmodal/__init__.py``) is the public façade above every
# layer: it imports the estimators.  The probe stands in an empty package object for it,
# so that importing a layer runs that layer's imports only.  One fresh interpreter imports
# the layers in order, lowest first, and reports the modules of the package each layer's
# import newly loaded.  It fails exactly where importing each layer alone (a fork per
# layer, before) fails, without re-importing the lower layers for each: when layer k is
# imported only the layers below k are loaded, each of which loaded nothing above itself
# (else that layer fails), so a module above k that layer k's imports reach is loaded,
# and reported, by layer k's import.  A violation shows at the lowest layer that has it.
_PROBE = """
import importlib, json, sys, types
root_path, layers = sys.argv[1], json.loads(sys.argv[2])
root = types.ModuleType("temporal_xmodal")
root.__path__ = [root_path]
sys.modules["temporal_xmodal"] = root
for i, names in enumerate(layers):
    before = set(sys.modules)
    try:
        for name in names:
            importlib.import_module(name)
    except BaseException as exc:
        print(json.dumps([i, "error", repr(exc)]), flush=True)
        sys.exit(1)
    loaded = sorted(m for m in set(sys.modules) - before if m.startswith("temporal_xmodal."))
    print(json.dumps([i, "ok", loaded]), flush=True)
"""


@pytest.fixture(scope="module")
def loaded_by_layer():
    """{layer index: modules of the package loaded by importing that layer (after the
    layers below it)}."""
    import json

    layers = []
    for layer, units in enumerate(LAYERS):
        # temporal_xmodal.__main__ runs the command line when imported
        names = [m for m, _ in _modules() if _unit(m) in units and _unit(m) != "__main__"]
        layers.append(names)
    # the package's parent first, the caller's path kept (packages installed with --target,
    # as the GPU check installs skorch, live there)
    path = [str(ROOT.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    out = subprocess.run([sys.executable, "-c", _PROBE, str(ROOT), json.dumps(layers)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    results = {}
    for line in out.stdout.splitlines():
        i, status, payload = json.loads(line)
        assert status == "ok", f"importing layer {LAYERS[i]} failed: {payload}"
        results[i] = payload
    assert len(results) == len(LAYERS), out.stderr[-2000:]
    return results


def test_each_layer_loads_alone(loaded_by_layer):
    """Importing every module of a layer (on the layers below it only) loads no higher
    layer."""
    wrong = []
    for layer, loaded in sorted(loaded_by_layer.items()):
        higher = sorted({m for m in loaded if LAYER_OF.get(_unit(m), -1) > layer})
        if higher:
            wrong.append(f"layer {LAYERS[layer]} loaded {higher}")
    assert not wrong, "\n".join(wrong)


def _architecture_tree():
    """Paths listed in the tree block of docs/architecture.md, relative to the repo root."""
    text = (ROOT.parent / "docs" / "architecture.md").read_text()
    block = text.split("```\n", 2)[1]
    paths, stack = [], []
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        name = line.split()[0]
        if not (name.endswith("/") or name.endswith(".py")):
            continue  # a continuation line of a description
        depth = indent // 2
        stack = stack[:depth] + [name.rstrip("/")]
        paths.append("/".join(stack))
    return paths


def test_architecture_page_lists_the_tree_as_it_is():
    listed = _architecture_tree()
    assert listed[0] == "temporal_xmodal"
    missing = [p for p in listed if not (ROOT.parent / p).exists()]
    assert not missing, f"docs/architecture.md lists paths that do not exist: {missing}"
    modules = {str(p.relative_to(ROOT.parent)) for _, p in _modules()}
    unlisted = sorted(modules - set(listed))
    assert not unlisted, f"modules missing from docs/architecture.md: {unlisted}"


def test_architecture_page_states_these_layers():
    text = (ROOT.parent / "docs" / "architecture.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
    table = [sorted(u.strip(" `") for u in row.split("|")[2].split(",")) for row in rows]
    expected = [sorted(u for u in units if u != "__main__") for units in LAYERS]
    assert table == expected
