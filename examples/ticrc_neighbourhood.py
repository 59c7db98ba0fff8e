"""Browsing a newspaper picture's caption neighbourhood across time (TICRC).

TICRC holds pictures from historical US newspapers (Chronicling America, 1853-1922),
each with the issue date and its caption.  A ``DiachronicEmbedder`` projects an
item *at an instant*: f(x, t).  So one can ask "which captions are closest to this
picture if we read it as of 1870? as of 1920?" by projecting the picture and every
caption of the archive at that year.  This script

1. loads TICRC ``train`` + ``train2`` and holds out 15 % of the pairs;
2. featurises the pictures with EfficientNet-Lite0 (1280-d pooled ImageNet features,
   cached on disk, so only the first run computes them) and the captions with
   TF-IDF, and stacks them with the date (fractional years) into
   ``X = [image | text | time]``;
3. fits a ``DiachronicEmbedder`` for a few epochs.  TICRC has no categories and
   exactly one caption per picture, so each pair is its own class
   (``y = arange(n)``): the counterpart is the only positive and every other caption
   a negative; time enters through the time-conditioned projections;
4. checks the model on the held-out pictures (MRR of the true caption among the
   held-out captions, each projected at the query picture's date: captions carry no
   date of their own) against a random ranking;
5. picks a held-out picture and prints its top captions (``neighbourhood_over_time``)
   when the picture and the whole archive of captions are projected at 1870, 1890
   and 1910, what entered and left from one year to the next, and where the
   picture's own caption ranks;
6. prints the ten captions whose nearest captions change most between the first
   and the last year (``neighbourhood_shift``: 1 - Jaccard of the top-10 sets, and
   the displacement of the caption's own embedding).  ``--plot out.png`` draws the
   picture, the ranks of its nearest captions across the years and the shifting
   captions.

Without the data folder the script prints where it looked and exits with status 0.

Run from the repository root::

    python examples/ticrc_neighbourhood.py             # the first run also caches
                                                       #   the 2,729 image features
    python examples/ticrc_neighbourhood.py --fast      # 150 pictures
    python examples/ticrc_neighbourhood.py --picture 12 --years 1880 1900 1920 --plot nb.png

The data is looked up in ``$TEMPORAL_XMODAL_DATA/ticrc`` (default ``../shared/data``
next to the repository) and the feature cache in ``$TEMPORAL_XMODAL_CACHE`` (default
``~/.cache/temporal_xmodal``).
"""

import argparse
import os
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sklearn.preprocessing import StandardScaler
from sklearn.utils import Bunch
from threadpoolctl import threadpool_limits

from temporal_xmodal import DiachronicEmbedder, TimeRangeWarning, stack_modalities
from temporal_xmodal.datasets import load_ticrc, ticrc_training_pairs
from temporal_xmodal.metrics import reciprocal_rank_per_query
from temporal_xmodal.search import neighbourhood_over_time, neighbourhood_shift

DATA_DIR = Path(os.environ.get("TEMPORAL_XMODAL_DATA",
                               Path(__file__).resolve().parents[2] / "shared" / "data"))
CACHE_DIR = os.environ.get("TEMPORAL_XMODAL_CACHE", "~/.cache/temporal_xmodal")


def short(caption, width=58):
    """A caption on one line, cut to ``width`` characters."""
    text = " ".join(caption.replace("\n", " / ").split())
    return text if len(text) <= width else text[:width - 1] + "…"


# --------------------------------------------------------------------------------------
# Data and features
# --------------------------------------------------------------------------------------
def featurise(paths, captions, fit_rows):
    """Image and text feature blocks of all pairs; scalers/vocabulary from ``fit_rows``."""
    # imported here: the featurisers need the optional extra [features]
    from temporal_xmodal.features import EfficientNetImageFeatures, TfidfTextFeatures

    start = time.perf_counter()
    images = EfficientNetImageFeatures(cache_dir=CACHE_DIR).fit_transform(paths)
    images = StandardScaler().fit(images[fit_rows]).transform(images)
    tfidf = TfidfTextFeatures(min_df=2).fit([captions[i] for i in fit_rows])
    texts = tfidf.transform(captions)
    print(f"features: {images.shape[1]} image (EfficientNet-Lite0) + {texts.shape[1]} text "
          f"(TF-IDF terms) columns in {time.perf_counter() - start:.1f} s")
    return images, texts


# --------------------------------------------------------------------------------------
# Held-out check: captions projected at the query picture's date
# --------------------------------------------------------------------------------------
def heldout_ranks(model, images, texts, dates):
    """Rank of each held-out picture's own caption among the held-out captions.

    Captions carry no date, so every candidate caption is projected at the date of
    the query picture (one ``transform_text`` per distinct date); projecting each
    caption at its own picture's date would leak the answer.
    """
    n = len(images)
    Z_image = model.transform_image(images, time=dates)
    scores = np.empty((n, n))
    for date in np.unique(dates):
        rows = np.flatnonzero(dates == date)
        scores[rows] = Z_image[rows] @ model.transform_text(texts, time=date).T
    reciprocal = reciprocal_rank_per_query(scores, np.eye(n, dtype=bool))
    return np.rint(1.0 / reciprocal).astype(int)


# --------------------------------------------------------------------------------------
# The neighbourhood of one picture at several instants, and the captions that shift most
# --------------------------------------------------------------------------------------
def own_rank(model, archive, query, year):
    """Rank of the picture's own caption among all captions, everything projected at ``year``."""
    z_image = model.transform_image(archive.images[query][None, :], time=year)
    scores = (model.transform_text(archive.texts, time=year) @ z_image.T).ravel()
    return int(np.sum(scores >= scores[query]))  # ties count against the caption


def browse(model, archive, query, years, top_k):
    """Print the top captions of picture ``query`` projected at each of ``years``."""
    captions, dates = archive.captions, archive.dates
    print(f"\nPicture #{query} ({Path(archive.paths[query]).name}), issue of {dates[query]:.2f}")
    print(f"  its caption: {short(captions[query], 90)!r}")
    print(f"  candidates: all {len(captions)} captions of the archive; (year) = issue date "
          "of the caption's own picture, shown for reading only; + entered, = kept since "
          "the previous year")
    table = neighbourhood_over_time(model, archive.images[query], archive.texts, years,
                                    k=top_k, payload=pd.Series(captions, name="caption"))
    for year in years:
        rows = table[table["instant"] == year]
        ranked, left = rows[rows["status"] != "left"], rows[rows["status"] == "left"]
        print(f"\n  projected at {year:g}: own caption ranked {own_rank(model, archive, query, year)}"
              f"; mean issue year of the top {top_k}: {dates[ranked['neighbour']].mean():.0f}")
        for row in ranked.itertuples():
            mark = {"entered": "+", "kept": "="}.get(row.status, " ")
            own = "*" if row.neighbour == query else " "
            print(f"   {row.rank:2d}.{mark}{own} {row.score:.3f}  ({dates[row.neighbour]:.0f})  "
                  f"{short(row.caption)}")
        for row in left.itertuples():
            print(f"     left: {row.score:.3f}  ({dates[row.neighbour]:.0f})  {short(row.caption)}")
    print(f"\n  neighbourhood kept between consecutive years (shared captions among the top "
          f"{top_k}):")
    for a, b in zip(years[:-1], years[1:]):
        kept = int(((table["instant"] == b) & (table["status"] == "kept")).sum())
        print(f"    {a:g} -> {b:g}: {kept}/{top_k}")
    # Δ: mean 1 - Jaccard between consecutive years, and in words when the model barely moves
    print(f"  {table.attrs['time_change']['message']}")
    return table


def shifting_captions(model, archive, years, k=10, n=10):
    """The captions whose caption-to-caption neighbourhood changes most between two years."""
    t1, t2 = years[0], years[-1]
    shift = neighbourhood_shift(model, archive.texts, (t1, t2), k=k,
                                payload=pd.Series(archive.captions, name="caption"))
    print(f"\nThe {n} captions whose {k} nearest captions change most between {t1:g} and "
          f"{t2:g} (1 - Jaccard of the two top-{k} sets; displacement = 1 - cos of the "
          "caption's own embeddings at the two years):")
    for row in shift.head(n).itertuples():
        print(f"  shift {row.neighbourhood_shift:.2f}  displacement {row.displacement:.3f}  "
              f"({archive.dates[row.item]:.0f})  {short(row.caption, 70)}")
    print(f"  over all {len(shift)} captions: mean shift {shift['neighbourhood_shift'].mean():.2f}, "
          f"mean displacement {shift['displacement'].mean():.3f}")
    print(f"  {shift.attrs['time_change']['message']}")
    return shift


def plot(archive, query, table, shift, path):
    """The picture, its neighbourhood's ranks over the years, and the shifting captions."""
    import matplotlib.pyplot as plt
    from PIL import Image

    from temporal_xmodal.search import plot_neighbourhood_over_time, plot_neighbourhood_shift

    fig = plt.figure(figsize=(15, 10), layout="constrained")  # room for the outside legend
    grid = fig.add_gridspec(2, 3, width_ratios=[1, 1.4, 1], height_ratios=[1, 1])
    ax_pic, ax_rank = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1:])
    ax_bar, ax_all = fig.add_subplot(grid[1, :2]), fig.add_subplot(grid[1, 2])
    with Image.open(archive.paths[query]) as picture:
        ax_pic.imshow(picture.convert("RGB"))
    ax_pic.set_title(f"picture #{query}, issue of {archive.dates[query]:.0f}\n"
                     + textwrap.fill(short(archive.captions[query], 80), 32), fontsize=9)
    ax_pic.axis("off")
    # the titles end with how much the neighbourhoods change (Δ), in red when barely
    plot_neighbourhood_over_time(table, label="caption", width=48, ax=ax_rank,
                                 title="the picture's nearest captions, picture and captions "
                                       "projected at each year")
    years = sorted(set(table["instant"]))
    plot_neighbourhood_shift(shift, n=10, label="caption", width=60, axes=(ax_bar, ax_all),
                             title=f"captions whose nearest captions change most, "
                                   f"{years[0]:g} vs {years[-1]:g}")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"\nfigure written to {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast", action="store_true",
                        help="the first 150 pictures, 3 epochs, a small net")
    parser.add_argument("--picture", type=int, default=None,
                        help="index of the picture to browse (default: the held-out picture "
                             "whose caption the model ranks best)")
    parser.add_argument("--years", type=float, nargs="+", default=[1870, 1890, 1910],
                        help="instants at which to project (default 1870 1890 1910)")
    parser.add_argument("--top-k", type=int, default=5, help="captions shown per year")
    parser.add_argument("--plot", metavar="PNG", help="also write a figure to this file")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS and torch threads for training and browsing (default 1; "
                             "the image featuriser uses every core)")
    args = parser.parse_args()

    folder = DATA_DIR / "ticrc"
    if not folder.is_dir():
        print(f"TICRC data not found at {folder}; nothing to browse. Set "
              "TEMPORAL_XMODAL_DATA to the folder that holds ticrc/ to run this example.")
        return

    # ------------------------------------------------------------------ data
    paths, captions, dates = ticrc_training_pairs([load_ticrc(folder, "train"),
                                                   load_ticrc(folder, "train2")])
    n = 150 if args.fast else len(paths)  # --fast: ~5-10 s of features when not cached
    if args.picture is not None and not 0 <= args.picture < n:
        parser.error(f"--picture must be in 0..{n - 1}")
    archive = Bunch(paths=paths[:n], captions=captions[:n], dates=dates[:n])
    rng = np.random.default_rng(0)
    held = np.sort(rng.permutation(n)[:int(0.15 * n)])
    fit_rows = np.setdiff1d(np.arange(n), held)
    print(f"TICRC: {n} pictures with captions, issues {int(archive.dates.min())}-"
          f"{int(archive.dates.max())}; fit on {len(fit_rows)}, hold out {len(held)}")
    archive.images, archive.texts = featurise(archive.paths, archive.captions, fit_rows)
    # The featuriser's convolutions use every core; the small net trains fastest
    # on --threads (default 1) on a small shared CPU.
    threadpool_limits(args.threads)
    torch.set_num_threads(args.threads)

    # ------------------------------------------------------------------ model
    model = DiachronicEmbedder(
        window=2.0, decay=0.5,  # in years; inactive with one class per pair (see docstring)
        hidden_dim=64 if args.fast else 256, embedding_dim=128, time_dim=32,
        max_epochs=3 if args.fast else 8, optimizer="adam", lr=1e-3,
        n_image_features=archive.images.shape[1], random_state=0,
    )
    X_fit = stack_modalities(archive.images[fit_rows], archive.texts[fit_rows],
                             archive.dates[fit_rows])
    start = time.perf_counter()
    model.fit(X_fit, np.arange(len(fit_rows)))
    best = min(model.net_.history, key=lambda epoch: epoch["valid_loss"])["epoch"]
    print(f"DiachronicEmbedder fitted in {time.perf_counter() - start:.1f} s "
          f"(best epoch by validation loss: {best}/{model.max_epochs})")
    # Projecting outside the training range (e.g. a year after the last issue)
    # extrapolates, with a TimeRangeWarning; that is what we ask for when browsing.
    warnings.simplefilter("ignore", TimeRangeWarning)

    # ------------------------------------------------------------ sanity check
    ranks = heldout_ranks(model, archive.images[held], archive.texts[held], archive.dates[held])
    random_mrr = np.sum(1.0 / np.arange(1, len(held) + 1)) / len(held)
    print(f"held-out check: MRR of the true caption among {len(held)} captions "
          f"{np.mean(1.0 / ranks):.3f} (random ranking {random_mrr:.3f}); "
          f"true caption first for {np.sum(ranks == 1)} pictures")

    # ---------------------------------------------------------------- browse
    query = held[np.argmin(ranks)] if args.picture is None else args.picture
    years = sorted(args.years)
    table = browse(model, archive, query, years, args.top_k)
    shift = shifting_captions(model, archive, years)
    if args.plot:
        plot(archive, query, table, shift, args.plot)


if __name__ == "__main__":
    main()
