"""The benchmarks' specs, one module each, run by ``benchmarks/run.py`` (see its docstring)."""
