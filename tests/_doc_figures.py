"""Every figure a page quotes names its source, and the source holds it.

A page (the README, ``docs/**/*.md``, ``examples/README.md``) gives the source of the
figures of a paragraph or a table in an HTML comment right after it, invisible on GitHub
and in the Sphinx site::

    Diachronic reaches 0.865 category mAP, its control 0.693 (Δ +0.172).

    <!-- figures: benchmarks/results/bench_demo_time.json
    0.865 = results.demo.Diachronic.map.mean
    0.693 = results.demo.control.map.mean
    +0.172 = results.demo.Diachronic.map.mean - results.demo.control.map.mean
    -->

Each entry is the figure as printed (sign, ``−``, thousands commas and a trailing unit such
as ``×``, ``%``, ``s`` or ``GiB`` allowed), ``=``, and a Python expression over the JSON's
top-level keys: ``a.b`` and ``a["b c"]`` read keys, ``a[0]`` an item, with ``+ - * / **``,
``abs``, ``min``, ``max``, ``round``, ``len``, ``sum``, ``mean``, ``log``, ``sqrt`` and list
comprehensions (``max([s[w].map for w in ("a", "b")])``).  The figure must equal
the expression up to its printed rounding (``0.865`` holds values in [0.8645, 0.8655]);
``~=`` instead of ``=`` marks a rounded figure ("about 830 s"), which holds values within
half its last significant digit (830 → [825, 835], 30 → [25, 35]).

Figures quoted from a paper, or derived from the method's definition rather than measured,
name that instead of a file; their entries are the figures alone::

    <!-- figures: paper (Semedo and Magalhães 2019, Table 3)
    0.453, 0.521
    -->

A block covers the text from the previous block or heading down to itself (consecutive
blocks cover the same text).  A *measurement-shaped* figure of the prose (outside code
blocks, code spans and comments) — a decimal with three or more digits, a signed decimal,
a ratio (``3.1×``), a duration (``830 s``, ``12 min``, ``5.8 hours``), a size (``0.89 GiB``)
or a rate (``14.4/s``) — must be an entry of a block that covers it.

A table or a section rendered from a JSON sits between two markers, and must be what the
renderer of ``benchmarks/make_results.py`` (the one that writes ``docs/results.md``) gives::

    <!-- generated: reference_table benchmarks/results/bench_demo_time.json -->
    | world | Diachronic | ... |
    <!-- end generated -->

``docs/results.md`` is generated whole (``python benchmarks/make_results.py``); its own test
holds it.

Run ``python tests/_doc_figures.py [PAGE ...]`` to list what fails.
"""

import ast
import importlib.util
import json
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The pages held to their sources (``docs/results.md`` is generated whole).
PAGES = ("README.md", "docs/*.md", "docs/estimators/*.md", "examples/README.md")
GENERATED = ("docs/results.md",)
_REGION = re.compile(r"<!--\s*generated:\s*(?P<render>\w+)\s+(?P<source>\S+)\s*-->\n"
                     r"(?P<body>.*?)<!--\s*end generated\s*-->", re.S)

_BLOCK = re.compile(r"<!--\s*figures:(?P<head>[^\n]*)\n(?P<body>.*?)-->", re.S)
_HEADING = re.compile(r"^#{1,6} ", re.M)
_NUMBER = r"[+\-−]?\d[\d,]*(?:\.\d+)?"
#: A measurement-shaped figure of the prose.
_MEASURED = re.compile(
    r"(?<![\w.\-−+/])(?:"
    r"[+\-−]?\d+\.\d{3,}"                                # 0.865, ±0.004
    r"|[+\-−]\d+\.\d+"                                  # +0.04
    r"|\d[\d,]*(?:\.\d+)?\s?×(?!\s?\d)"                 # 3.1×, 25 × (not 512 × 512)
    r"|\d[\d,]*(?:\.\d+)?\s?(?:CPU\s)?(?:s|ms|µs|min|minutes|hours?|h)\b(?![\-/])"  # 830 s
    r"|\d[\d,]*(?:\.\d+)?\s?(?:GiB|MiB|KiB|GB|MB|kB)\b"  # 0.89 GiB
    r"|\d[\d,]*(?:\.\d+)?\s?(?:\w+\s?)?/s\b"           # 14.4/s, 30 pictures/s
    r")")
_FIGURE = re.compile(_NUMBER)


def pages(root=ROOT):
    """The pages held to their sources, as paths."""
    return sorted({p for pattern in PAGES for p in root.glob(pattern)}
                  - {root / g for g in GENERATED})


def renderers(root=ROOT):
    """``benchmarks/make_results.py`` as a module: the renderers of ``docs/results.md``."""
    spec = importlib.util.spec_from_file_location("make_results",
                                                  root / "benchmarks" / "make_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _normal(text):
    """The first number of a printed figure as the pages are compared by: ``+1,234.5×`` →
    ``"1234.5"``, ``−0.003`` → ``"-0.003"`` (``text`` itself when it holds none)."""
    match = _FIGURE.search(text.replace("−", "-"))
    return text if match is None else match.group(0).replace(",", "").lstrip("+")


def _value(text):
    """The number a printed figure states: ``−1,234.5×`` → -1234.5."""
    if _FIGURE.search(text.replace("−", "-")) is None:
        raise ValueError(f"no number in {text!r}")
    return float(_normal(text))


def _tolerance(text, rounded):
    """Half the last printed digit, or with ``rounded`` half the last significant one."""
    digits = _normal(text).lstrip("-")
    if "." in digits:
        return 0.5 * 10 ** -len(digits.split(".")[1])
    if rounded:
        return 0.5 * 10 ** (len(digits) - len(digits.rstrip("0")) or 0)
    return 0.5


def _mean(values):
    values = list(values)
    return sum(values) / len(values)


_FUNCTIONS = {"abs": abs, "min": min, "max": max, "round": round, "len": len, "sum": sum,
              "mean": _mean, "log": math.log, "sqrt": math.sqrt}
_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
        ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
        ast.Pow: lambda a, b: a ** b}


def evaluate(expression, document):
    """``expression`` over the JSON ``document`` (see the module's docstring)."""
    def walk(node, scope):
        if isinstance(node, ast.Expression):
            return walk(node.body, scope)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in scope:
                return scope[node.id]
            if node.id not in document:
                raise ValueError(f"unsupported expression: {node.id} is not a key of the JSON")
            return document[node.id]
        if isinstance(node, ast.Attribute):
            return walk(node.value, scope)[node.attr]
        if isinstance(node, ast.Subscript):
            return walk(node.value, scope)[walk(node.slice, scope)]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left, scope), walk(node.right, scope))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = walk(node.operand, scope)
            return -value if isinstance(node.op, ast.USub) else value
        if (isinstance(node, ast.Call) and not node.keywords
                and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS):
            return _FUNCTIONS[node.func.id](*[walk(arg, scope) for arg in node.args])
        if isinstance(node, (ast.List, ast.Tuple)):
            return [walk(item, scope) for item in node.elts]
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):  # [e for a in b for c in d]
            scopes = [scope]
            for generator in node.generators:
                if generator.ifs or not isinstance(generator.target, ast.Name):
                    raise ValueError("unsupported expression: a comprehension over one name, "
                                     "without if")
                scopes = [{**outer, generator.target.id: item} for outer in scopes
                          for item in walk(generator.iter, outer)]
            return [walk(node.elt, inner) for inner in scopes]
        raise ValueError(f"unsupported expression: {ast.unparse(node)}")
    return walk(ast.parse(expression.strip(), mode="eval"), {})


def _prose(text):
    """``text`` without fenced code, code spans and comments, lengths kept (blanks)."""
    def blank(match):
        return re.sub(r"[^\n]", " ", match.group(0))
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", blank, text, flags=re.S | re.M)
    text = re.sub(r"<!--.*?-->", blank, text, flags=re.S)
    return re.sub(r"(`+)[^`]*?\1", blank, text)


def _figures_in(text):
    """The printed figures of ``text`` (prose or not): their normalised strings."""
    return {_normal(m.group(0)) for m in re.finditer(r"(?<![\w.])" + _NUMBER, text)}


def check_page(path, root=ROOT):
    """The problems of one page: a list of strings, empty when every figure holds."""
    text = Path(path).read_text(encoding="utf-8")
    path = Path(path)
    name = path.relative_to(root) if path.is_relative_to(root) else path.name
    line = lambda pos: text.count("\n", 0, pos) + 1  # noqa: E731
    prose = _prose(text)
    problems, covered = [], []  # covered: (start, end, set of normalised figures)
    for region in _REGION.finditer(text):
        source = root / region.group("source")
        render = getattr(renderers(root), region.group("render"), None)
        if render is None or not source.is_file():
            problems.append(f"{name}:{line(region.start())}: cannot render "
                            f"{region.group('render')} from {region.group('source')}")
        else:
            rendered = render(json.loads(source.read_text(encoding="utf-8")))
            rendered = rendered if isinstance(rendered, str) else "\n".join(rendered)
            if rendered.strip() != region.group("body").strip():
                problems.append(f"{name}:{line(region.start())}: differs from "
                                f"{region.group('render')}({region.group('source')}): paste "
                                "its output again")
        covered.append((region.start(), region.end(), _figures_in(region.group(0))))
    boundaries = sorted({0, *(m.start() for m in _HEADING.finditer(prose))})
    previous_end, group_start = 0, 0
    for block in _BLOCK.finditer(text):
        between = text[previous_end:block.start()]
        if previous_end == 0 or between.strip():  # a new group, not a consecutive block
            group_start = max([previous_end] + [b for b in boundaries if b < block.start()])
        previous_end = block.end()
        head = block.group("head").strip()
        entries = [e.strip() for e in block.group("body").splitlines() if e.strip()]
        span = text[group_start:block.start()]
        figures = set()
        if head.startswith(("paper", "definition", "derived")):
            for entry in entries:
                figures |= {_normal(f) for f in re.findall(_NUMBER, entry)}
            covered.append((group_start, block.start(), figures))
            continue
        source = root / head.split()[0] if head else None
        if source is None or not source.is_file():
            problems.append(f"{name}:{line(block.start())}: source {head!r} is not a file")
            continue
        document = json.loads(source.read_text(encoding="utf-8"))
        for entry in entries:
            rounded = "~=" in entry
            printed, _, expression = entry.partition("~=" if rounded else "=")
            printed = printed.strip()
            if not expression.strip():
                problems.append(f"{name}:{line(block.start())}: entry {entry!r} has no "
                                "'= expression'")
                continue
            key = _normal(printed)
            figures.add(key)
            if key not in _figures_in(span):
                problems.append(f"{name}:{line(block.start())}: {printed} is not printed in "
                                "the text the block covers")
            try:
                value = float(evaluate(expression, document))
            except Exception as error:  # noqa: BLE001 - reported, the test fails
                problems.append(f"{name}:{line(block.start())}: {expression.strip()!r}: "
                                f"{type(error).__name__}: {error}")
                continue
            if abs(_value(printed) - value) > _tolerance(printed, rounded) + 1e-9 * abs(value):
                problems.append(f"{name}:{line(block.start())}: {printed} is printed, "
                                f"{source.name} gives {value:.6g} ({expression.strip()})")
        covered.append((group_start, block.start(), figures))
    for match in _MEASURED.finditer(prose):
        figure = _normal(match.group(0))
        if not any(start <= match.start() < end and figure in figures
                   for start, end, figures in covered):
            problems.append(f"{name}:{line(match.start())}: {match.group(0).strip()!r} "
                            "has no source block")
    return problems


def main(argv):
    paths = [Path(a).resolve() for a in argv] or pages()
    problems = [p for path in paths for p in check_page(path)]
    print("\n".join(problems) or "every figure holds")
    print(f"{len(problems)} problem(s) in {len(paths)} page(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
