#!/usr/bin/env python
"""How much of the library a neural fit walks through (issue 47's reading figures).

A tiny CPU ``DiachronicEmbedder`` fit with ``validation_fraction=0`` (no checkpoint figure):

* the library modules whose code runs during ``fit`` (``sys.setprofile``);
* the stack from ``fit`` to the loss's ``forward`` (exclusive): the library frames on it and
  the returns from skorch into the library;
* who owns a fit's lifecycle (issue 58), read from the package's code (docstrings and
  comments excluded): the files whose code mentions an interrupt (Ctrl-C logic), the places that learn a fit's outcome from a caught warning, and the attributes the estimators set on a net after building it;
  with ``--before TREE``, the same of another checkout (e.g. a worktree of the base).

* the package's lines and the share of them that are docstrings.

Usage: ``python benchmarks/probe_core.py [REPO] [--before TREE]`` (default: this checkout).
Prints the figures and the stack; writes ``benchmarks/results/probe_core.json``.
"""

import ast
import os
import re
import sys
import warnings
from pathlib import Path

_ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
_BEFORE = sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else None
_ARGS = [a for a in _ARGS if a != _BEFORE]
REPO = os.path.realpath(_ARGS[0] if _ARGS else os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, REPO)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import temporal_xmodal  # noqa: E402
from _common import write_results  # noqa: E402
from temporal_xmodal import DiachronicEmbedder  # noqa: E402
from temporal_xmodal.datasets import make_temporal_crossmodal  # noqa: E402

torch.set_num_threads(1)
PACKAGE = os.path.dirname(temporal_xmodal.__file__)


def library_module(filename):
    """The module path of a library file (``estimators/_neural.py``), or None."""
    filename = os.path.realpath(filename)
    return os.path.relpath(filename, PACKAGE) if filename.startswith(PACKAGE + os.sep) else None


#: What each lifecycle measure looks for in a line of the package (comments excluded).
LIFECYCLE = {
    "ctrl_c_files": re.compile(r"[Ii]nterrupt"),
    # the lines that catch, raise, record or warn about a Ctrl-C (the files where its logic is)
    "ctrl_c_logic_files": re.compile(r"except KeyboardInterrupt|raise KeyboardInterrupt|"
                                     r"KeyboardInterrupt\(|interrupted_ = |"
                                     r"TrainingInterruptedWarning\)|report_interrupt\("),
    "outcome_from_warnings": re.compile(
        r"issubclass\(w\.category, \(?(?:ConvergenceWarning|TrainingInterruptedWarning|"
        r"StillImprovingWarning)|simplefilter\(\"always\", ConvergenceWarning\)"),
    "net_attributes_set_after_construction": re.compile(r"\bnet_?\.[a-z_]+_? = "),
}


def docstring_lines(source):
    """The line numbers of ``source``'s docstrings (module, class and function)."""
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def line_counts(package):
    """Lines of the package's modules and the share of them that are docstrings."""
    total = docs = 0
    for path in sorted(Path(package).rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        total += len(source.splitlines())
        docs += len(docstring_lines(source))
    return {"lines": total, "docstring_lines": docs, "docstring_share": round(docs / total, 3)}


def lifecycle(package):
    """The lifecycle measures of the package at ``package`` (its folder), from its code
    (comments and docstrings excluded: a measure of where the logic lives)."""
    found = {name: [] for name in LIFECYCLE}
    for path in sorted(Path(package).rglob("*.py")):
        rel = str(path.relative_to(package))
        source = path.read_text(encoding="utf-8")
        docs = docstring_lines(source)
        for number, line in enumerate(source.splitlines(), 1):
            code = line.split("#", 1)[0]
            if number in docs or code.lstrip().startswith("def "):
                continue
            for name, pattern in LIFECYCLE.items():
                if pattern.search(code):
                    found[name].append(f"{rel}:{number}")
    for name in ("ctrl_c_files", "ctrl_c_logic_files"):
        found[name] = sorted({where.split(":")[0] for where in found[name]})
    return {name: {"count": len(where), "where": where} for name, where in found.items()}


def main():
    X, y, info = make_temporal_crossmodal(120, return_info=True, random_state=0)
    est = DiachronicEmbedder(n_image_features=info.n_image_features, max_epochs=1,
                             hidden_dim=16, embedding_dim=8, time_dim=8, batch_size=32,
                             validation_fraction=0, random_state=0, device="cpu")
    est.fit(X, y)  # warm every import and lazy attribute: count the fit's own code only
    modules, stacks = set(), []

    def profile(frame, event, arg):
        if event != "call":
            return
        name = library_module(frame.f_code.co_filename)
        if name is not None:
            modules.add(name)
        if frame.f_code.co_name == "forward" and not stacks and name and \
                (name.startswith("losses/") or name.endswith("_loss.py")):
            stack, f = [], frame.f_back
            while f is not None:
                stack.append((library_module(f.f_code.co_filename) or
                              _short(f.f_code.co_filename), f.f_code.co_name,
                              library_module(f.f_code.co_filename) is not None))
                if f.f_code.co_name == "fit" and library_module(f.f_code.co_filename):
                    break
                f = f.f_back
            stacks.append(stack[::-1])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sys.setprofile(profile)
        try:
            est.fit(X, y)
        finally:
            sys.setprofile(None)
    stack = stacks[0] if stacks else []
    lib_frames = [s for s in stack if s[2]]
    skorch_returns = sum(1 for a, b in zip(stack, stack[1:]) if not a[2] and b[2]
                         and "skorch" in a[0])
    lines_run = {m: len(Path(PACKAGE, m).read_text(encoding="utf-8").splitlines())
                 for m in modules}
    # the method's own modules: Diachronic's estimator, net and loss, wherever they live
    method = [m for m in modules if "diachronic" in m]
    method_share = sum(lines_run[m] for m in method) / sum(lines_run.values())
    print(f"library modules whose code runs: {len(modules)} ({sum(lines_run.values())} lines; "
          f"the method's own {len(method)} modules: {method_share:.0%} of them)")
    for m in sorted(modules):
        print("   ", m)
    print(f"library frames from fit to the loss's forward (exclusive): {len(lib_frames)}")
    print(f"returns from skorch into the library on that stack: {skorch_returns}")
    for where, func, lib in stack:
        print(f"    {'lib   ' if lib else '      '}{where}:{func}")
    now = lifecycle(PACKAGE)
    before = lifecycle(os.path.join(_BEFORE, "temporal_xmodal")) if _BEFORE else None
    for name, measure in now.items():
        print(f"{name}: {measure['count']}" + (f" (before: {before[name]['count']})"
                                               if before else ""))
    lines = line_counts(PACKAGE)
    lines_before = line_counts(os.path.join(_BEFORE, "temporal_xmodal")) if _BEFORE else None
    print(f"package lines: {lines}" + (f" (before: {lines_before})" if before else ""))
    write_results("probe_core", {
        "modules": sorted(modules), "n_modules": len(modules),
        "lines_run": sum(lines_run.values()), "method_modules": sorted(method),
        "method_share": round(method_share, 3),
        "stack": [f"{'lib   ' if lib else '      '}{w}:{fn}" for w, fn, lib in stack],
        "library_frames": len(lib_frames), "skorch_returns": skorch_returns,
        "lifecycle": now, "lifecycle_before": before,
        "package_lines": lines, "package_lines_before": lines_before,
        "before_tree": _BEFORE and _commit(_BEFORE)},
        os.path.join(REPO, "benchmarks", "results"))


def _commit(tree):
    """The short commit a checkout is at (its folder's name when it is not a git tree)."""
    import subprocess
    done = subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    return done.stdout.strip() or os.path.basename(os.path.realpath(tree))


def _short(filename):
    parts = filename.split(os.sep)
    for anchor in ("skorch", "torch", "sklearn"):
        if anchor in parts:
            return os.sep.join(parts[parts.index(anchor):])
    return os.path.basename(filename)


if __name__ == "__main__":
    main()
