"""docs/results.md sections of the scale benchmarks (``make_results.py`` imports them):
``bench_estimate``, ``bench_scale`` and ``bench_paper_scale``.  Every figure is read from
the document."""

from _common import settings_line as _settings

GIB = 2 ** 30


def estimate_section(doc):
    """The costs behind the main job's time estimate."""
    lines = ["## The main job's time estimate: what it multiplies", "",
             f"{_settings(doc)}: CPU seconds on one thread; a fit = per fit + epochs × "
             "(per 1000 items × items / 1000 + per epoch), fitted to three runs.", "",
             "| estimator | features | per fit | per 1000 items × epochs | per epoch |",
             "|---|---|---|---|---|"]
    for width, fits in doc.get("fits", {}).items():
        for name, f in fits.items():
            lines.append(f"| {name} | {width} | {f['per_fit']:.3f} | "
                         f"{f['per_kilo_item_epoch']:.3f} | {f['per_epoch']:.3f} |")
    evaluation = doc.get("evaluation", {})
    if evaluation:
        sizes = list(next(iter(evaluation.values())))
        lines += ["", "Evaluation (`evaluate_estimator`, CPU s; above 5,000 test items a "
                  "5,000-query sample):", "",
                  "| estimator | " + " | ".join(f"{int(n):,} test items" for n in sizes) + " |",
                  "|---|" + "---|" * len(sizes)]
        for name, row in evaluation.items():
            lines.append(f"| {name} | " + " | ".join(f"{row[n]:.2f}" for n in sizes) + " |")
    sam = doc.get("sam_synthetic")
    if sam:
        lines += ["", f"SAM on the synthetic data ({sam['items']:,} items, 112 features): "
                      f"{sam['per_epoch']:.3f} CPU s per epoch, {sam['per_fit']:.3f} per fit."]
    return lines


def scale_section(doc):
    """Every estimator at the users' sizes."""
    lines = ["## Every estimator at the users' sizes (512 + 512 float32 features)", "",
             f"{_settings(doc)}: one epoch for the neural estimators, one thread; peaks are "
             "beyond the data (and the output for `transform`), × the float32 X.", "",
             "| items | estimator | fit CPU s | fit peak × X | transform CPU s | output | "
             "transform peak × X | score CPU s | search CPU s | commit |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        lines.append(f"| {r['n']:,} | {r['name']} | {r['fit_cpu']:.1f} | "
                     f"{r['fit_peak_over_x']:.2f} | {r['transform_cpu']:.1f} | "
                     f"{r['transform_dtype']} | {r['transform_peak_over_x']:.2f} | "
                     f"{r['score_cpu']:.1f} | {r['search_cpu']:.1f} | "
                     f"{r.get('commit', 'before 1c83739')} |")
    plain = doc.get("plain")
    if plain:
        lines += ["", f"Diachronic's epoch at {plain['n']:,} items: {plain['fit_cpu']:.1f} CPU "
                      f"s, a plain PyTorch loop of the same network {plain['plain_loop_cpu']:.1f}"
                      f" CPU s (ratio {plain['ratio']:.2f})."]
    return lines


def paper_scale_section(doc):
    """The DCM paper's setting, and 10⁶ CLIP-sized items."""
    lines = ["## The DCM paper's setting on one machine", "", f"{_settings(doc)}.", "",
             "| case | data GiB | fit peak − data GiB | training batches run / epoch | "
             "epoch s (extrapolated) | 25 epochs h | validation s | exact mAP | "
             "exact mAP CPU s | reference CPU s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for case, r in doc["results"].items():
        lines.append(
            f"| {case} | {r['data_bytes'] / GIB:.2f} | {r['fit_peak_over_data_gib']:.2f} | "
            f"{r['train_batches_run']:,} / {r['train_batches_epoch']:,} | "
            f"{r['epoch_seconds_extrapolated']:.0f} | {r['twenty_five_epochs_hours']:.1f} | "
            f"{r['validation_seconds']:.1f} | {r['exact_map']:.3f} | "
            f"{r['exact_map_cpu_seconds']:.0f} | {r['reference_cpu_seconds_both_directions']:.0f} |")
    return lines


SCALE_SECTIONS = {"bench_estimate": estimate_section, "bench_scale": scale_section,
                  "bench_paper_scale": paper_scale_section}
