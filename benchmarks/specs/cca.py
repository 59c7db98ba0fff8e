"""``CCACrossModal.fit`` against scikit-learn's iterative CCA: speed and agreement.

Two views sharing a 40-d latent (scales decreasing geometrically; 512 image, 300 text
features, noise 10), n = 5,000, 32 components.  Speed: ours (closed form, best of 3, at
``reg=0`` and the default ``reg``) against ``sklearn.cross_decomposition.CCA(max_iter=500)``
(NIPALS, once); target >= 50x.  Agreement: canonical correlations of ours at ``reg=0``
against the correlations of scikit-learn's training scores; target max |difference| < 1e-3
over the first 10 components (NIPALS' trailing components may stop at ``max_iter``).
Full run: about 30 s.
"""

import warnings

import numpy as np

from _common import best_of, target

FULL = {"n_samples": 5000, "n_image_features": 512, "n_text_features": 300,
        "n_components": 32, "n_latent": 40, "latent_scale_range": [3.0, 0.3], "noise": 10.0,
        "sklearn_max_iter": 500, "repeats": 3, "compare_first": 10, "seed": 0}
QUICK = {**FULL, "n_samples": 500, "n_image_features": 128, "n_text_features": 64,
         "n_components": 4, "n_latent": 6, "repeats": 1}


def make_views(params):
    """Two views sharing a latent z with geometrically decreasing scales, plus noise."""
    rng = np.random.default_rng(params["seed"])
    n, n_latent = params["n_samples"], params["n_latent"]
    z = rng.standard_normal((n, n_latent)) * np.geomspace(*params["latent_scale_range"],
                                                          n_latent)

    def view(n_features):
        return (z @ rng.standard_normal((n_latent, n_features))
                + params["noise"] * rng.standard_normal((n, n_features)))

    return view(params["n_image_features"]), view(params["n_text_features"])


def _agreement(ours, theirs, first):
    diff = np.abs(ours - theirs)
    return {"abs_diff": diff.tolist(), "max_abs_diff_all": float(diff.max()),
            "max_abs_diff_first": float(diff[:first].max()),
            "worst_component": int(diff.argmax()) + 1}


def measure(args):
    from sklearn.cross_decomposition import CCA
    from sklearn.exceptions import ConvergenceWarning

    from temporal_xmodal import CCACrossModal, stack_modalities

    params = QUICK if args.quick else FULL
    X_image, X_text = make_views(params)
    X = stack_modalities(X_image, X_text, 0.0)
    k, reg = params["n_components"], CCACrossModal().reg

    def ours(r):
        return CCACrossModal(k, reg=r, n_image_features=params["n_image_features"]).fit(X)

    t_ours0, ours0 = best_of(lambda: ours(0.0), params["repeats"])
    t_ours, ours_reg = best_of(lambda: ours(reg), params["repeats"])
    sk = CCA(n_components=k, max_iter=params["sklearn_max_iter"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        t_sk, _ = best_of(lambda: sk.fit(X_image, X_text), 1)
    x_scores, y_scores = sk.transform(X_image, X_text)  # sklearn >= 1.3 keeps no x_scores_
    rho_sk = np.array([np.corrcoef(x_scores[:, j], y_scores[:, j])[0, 1] for j in range(k)])
    first = min(params["compare_first"], k)
    results = {
        "default_reg": reg, "speedup_reg0": t_sk / t_ours0, "speedup_default_reg": t_sk / t_ours,
        "sklearn_convergence_warnings": sum(issubclass(w.category, ConvergenceWarning)
                                            for w in caught),
        "sklearn_n_iter": np.asarray(sk.n_iter_).tolist(),
        "correlations_sklearn": rho_sk.tolist(),
        "correlations_ours_reg0": ours0.canonical_correlations_.tolist(),
        "correlations_ours_default_reg": ours_reg.canonical_correlations_.tolist(),
        "compared_first": first,
        "agreement_reg0": _agreement(ours0.canonical_correlations_, rho_sk, first),
        "agreement_default_reg": _agreement(ours_reg.canonical_correlations_, rho_sk, first)}
    print(f"ours {t_ours0:.3f} s (reg=0), {t_ours:.3f} s (reg={reg:g}); sklearn {t_sk:.3f} s; "
          f"max |rho diff| first {first}: {results['agreement_reg0']['max_abs_diff_first']:.2e}")
    return {"parameters": params,
            "timings": {"ours_reg0_s": t_ours0, "ours_default_reg_s": t_ours,
                        "sklearn_cca_s": t_sk},
            "results": results,
            "targets": {
                "speedup": target(min(results["speedup_reg0"], results["speedup_default_reg"]),
                                  50.0, ">=", "CCACrossModal.fit >= 50x faster than sklearn "
                                  "CCA (worse of reg=0 / default reg)"),
                "correlations_agree": target(
                    results["agreement_reg0"]["max_abs_diff_first"], 1e-3, "<",
                    f"max |rho ours(reg=0) - rho sklearn| over the first {first} components "
                    "< 1e-3")}}
