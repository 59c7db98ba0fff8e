"""Benchmark of ``CCACrossModal.fit`` against scikit-learn's iterative CCA.

What it measures
----------------
Both fit the same synthetic two-view data with real shared structure: a
latent ``z`` (40-d, latent scales decreasing geometrically so that the
canonical correlations are distinct), ``image = z @ A + noise`` (512-d) and
``text = z @ B + noise`` (300-d), n = 5,000 samples, 32 components.

1. Speed: ``CCACrossModal(32, reg=...).fit`` (closed form: two ``eigh`` and
   one SVD; best of 3, with ``reg=0`` and the default ``reg``) against
   ``sklearn.cross_decomposition.CCA(n_components=32, max_iter=500).fit``
   (NIPALS, timed once: it is slow), in the same run.  Target >= 50x.
2. Agreement: the canonical correlations.  For scikit-learn, the correlation
   of the j-th x and y training scores (``np.corrcoef``); for ours,
   ``canonical_correlations_`` with ``reg=0`` (the unregularised problem
   scikit-learn solves; the default ``reg`` is reported too).  NIPALS deflates
   one component at a time and may stop at ``max_iter`` on components whose
   correlations are close, so its trailing components can drift: the target
   is max |difference| < 1e-3 over the first 10 components, and the maximum
   over all 32 is reported as well.

scikit-learn >= 1.3 no longer stores ``x_scores_``/``y_scores_``; the training
scores are then taken as ``transform(X, Y)``, which equals them (the rotations
map the training data onto its scores).

How to run
----------
::

    python benchmarks/bench_cca.py            # full sizes (about 30 s, mostly sklearn)
    python benchmarks/bench_cca.py --quick    # n=500, 128 + 64 features, 4 components

The figures are printed and written to ``benchmarks/results/bench_cca.json``
(``--output-dir`` to change the folder).
"""

import time
import warnings

import numpy as np
from _common import best_of, make_parser, print_header, print_targets, target, write_results
from sklearn.cross_decomposition import CCA
from sklearn.exceptions import ConvergenceWarning

from temporal_xmodal import CCACrossModal, stack_modalities

NAME = "bench_cca"
FULL = {
    "n_samples": 5000,
    "n_image_features": 512,
    "n_text_features": 300,
    "n_components": 32,
    "n_latent": 40,
    "latent_scale_range": [3.0, 0.3],
    "noise": 10.0,
    "sklearn_max_iter": 500,
    "repeats": 3,
    "compare_first": 10,
    "seed": 0,
}
QUICK = {
    **FULL,
    "n_samples": 500,
    "n_image_features": 128,
    "n_text_features": 64,
    "n_components": 4,
    "n_latent": 6,
    "repeats": 1,
}
DEFAULT_REG = CCACrossModal().reg
SPEEDUP_TARGET = 50.0
AGREEMENT_TOLERANCE = 1e-3


def make_views(params):
    """Two views sharing a latent z with geometrically decreasing scales, plus noise."""
    rng = np.random.default_rng(params["seed"])
    n, n_latent = params["n_samples"], params["n_latent"]
    scales = np.geomspace(*params["latent_scale_range"], n_latent)
    z = rng.standard_normal((n, n_latent)) * scales

    def view(n_features):
        mixing = rng.standard_normal((n_latent, n_features))
        return z @ mixing + params["noise"] * rng.standard_normal((n, n_features))

    return view(params["n_image_features"]), view(params["n_text_features"])


def fit_ours(X, params, reg):
    """Fit ``CCACrossModal`` on the stacked layout."""
    return CCACrossModal(params["n_components"], reg=reg,
                         n_image_features=params["n_image_features"]).fit(X)


def fit_sklearn(X_image, X_text, params):
    """Fit scikit-learn's CCA once; return (model, seconds, convergence warnings)."""
    model = CCA(n_components=params["n_components"], max_iter=params["sklearn_max_iter"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        model.fit(X_image, X_text)
        elapsed = time.perf_counter() - start
    n_warnings = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return model, elapsed, n_warnings


def sklearn_correlations(model, X_image, X_text):
    """Per-component correlation of scikit-learn's x and y training scores."""
    x_scores = getattr(model, "x_scores_", None)
    y_scores = getattr(model, "y_scores_", None)
    if x_scores is None or y_scores is None:
        x_scores, y_scores = model.transform(X_image, X_text)
    return np.array([np.corrcoef(x_scores[:, j], y_scores[:, j])[0, 1]
                     for j in range(x_scores.shape[1])])


def agreement(ours, theirs, first):
    """Absolute differences of two correlation vectors: max overall, over ``first``, argmax."""
    diff = np.abs(ours - theirs)
    return {
        "abs_diff": diff.tolist(),
        "max_abs_diff_all": float(diff.max()),
        "max_abs_diff_first": float(diff[:first].max()),
        "worst_component": int(diff.argmax()) + 1,
    }


def run(params):
    """Time both fits and compare their canonical correlations."""
    X_image, X_text = make_views(params)
    X = stack_modalities(X_image, X_text, 0.0)
    t_ours0, ours0 = best_of(lambda: fit_ours(X, params, 0.0), params["repeats"])
    t_ours, ours = best_of(lambda: fit_ours(X, params, DEFAULT_REG), params["repeats"])
    sk, t_sk, n_warnings = fit_sklearn(X_image, X_text, params)
    rho_sk = sklearn_correlations(sk, X_image, X_text)
    rho0, rho = ours0.canonical_correlations_, ours.canonical_correlations_
    first = min(params["compare_first"], params["n_components"])
    return {
        "timings": {"ours_reg0_s": t_ours0, "ours_default_reg_s": t_ours, "sklearn_cca_s": t_sk},
        "results": {
            "default_reg": DEFAULT_REG,
            "speedup_reg0": t_sk / t_ours0,
            "speedup_default_reg": t_sk / t_ours,
            "sklearn_convergence_warnings": n_warnings,
            "sklearn_n_iter": np.asarray(sk.n_iter_).tolist(),
            "correlations_sklearn": rho_sk.tolist(),
            "correlations_ours_reg0": rho0.tolist(),
            "correlations_ours_default_reg": rho.tolist(),
            "compared_first": first,
            "agreement_reg0": agreement(rho0, rho_sk, first),
            "agreement_default_reg": agreement(rho, rho_sk, first),
        },
    }


def print_run(res, params):
    t, r = res["timings"], res["results"]
    k, first = params["n_components"], r["compared_first"]
    print_header(
        f"Speed: fit on n={params['n_samples']}, {params['n_image_features']} image + "
        f"{params['n_text_features']} text features, {k} components")
    reps, max_iter = params["repeats"], params["sklearn_max_iter"]
    at_max_iter = sum(i >= max_iter for i in r["sklearn_n_iter"])
    rows = [
        (f"CCACrossModal, reg=0 (best of {reps})", t["ours_reg0_s"], ""),
        (f"CCACrossModal, reg={r['default_reg']:g} (best of {reps})",
         t["ours_default_reg_s"], ""),
        (f"sklearn CCA, max_iter={max_iter} (once)", t["sklearn_cca_s"],
         f"({r['sklearn_convergence_warnings']} convergence warnings; "
         f"{at_max_iter} components stopped at max_iter)"),
    ]
    for label, seconds, extra in rows:
        print(f"  {label:38s}: {seconds:8.3f} s  {extra}".rstrip())
    print(f"  speed ratio: {r['speedup_reg0']:.1f}x (reg=0), "
          f"{r['speedup_default_reg']:.1f}x (reg={r['default_reg']:g})")

    print_header(f"Canonical correlations, first {first} of {k}")
    print(f"  {'j':>3s}  {'sklearn':>10s}  {'ours reg=0':>10s}  {'|diff|':>9s}  "
          f"{'ours reg=' + format(r['default_reg'], 'g'):>14s}")
    rows = zip(r["correlations_sklearn"], r["correlations_ours_reg0"],
               r["agreement_reg0"]["abs_diff"], r["correlations_ours_default_reg"])
    for j, (sk, o0, d, o) in enumerate(rows, start=1):
        if j > first:
            break
        print(f"  {j:3d}  {sk:10.6f}  {o0:10.6f}  {d:9.2e}  {o:14.6f}")
    for label, key in (("reg=0", "agreement_reg0"),
                       (f"reg={r['default_reg']:g}", "agreement_default_reg")):
        a = r[key]
        print(f"  ours {label:9s} vs sklearn: max |diff| first {first} = "
              f"{a['max_abs_diff_first']:.2e}, all {k} = {a['max_abs_diff_all']:.2e} "
              f"(worst: component {a['worst_component']})")


def evaluate_targets(res, params):
    r = res["results"]
    return {
        "speedup": target(
            min(r["speedup_reg0"], r["speedup_default_reg"]), SPEEDUP_TARGET, ">=",
            "CCACrossModal.fit >= 50x faster than sklearn CCA (worse of reg=0 / default reg)"),
        "correlations_agree": target(
            r["agreement_reg0"]["max_abs_diff_first"], AGREEMENT_TOLERANCE, "<",
            f"max |rho ours(reg=0) - rho sklearn| over the first {r['compared_first']} "
            f"components < 1e-3"),
    }


def main(argv=None):
    args = make_parser(__doc__).parse_args(argv)
    params = QUICK if args.quick else FULL
    print(f"bench_cca ({'quick' if args.quick else 'full'} sizes)")
    res = run(params)
    print_run(res, params)
    targets = evaluate_targets(res, params)
    print_targets(targets)
    if args.quick:
        print("  (quick run: sizes below the target sizes, pass/fail is indicative only)")
    write_results(NAME, {"quick": args.quick, "parameters": params, **res, "targets": targets},
                  args.output_dir)


if __name__ == "__main__":
    main()
