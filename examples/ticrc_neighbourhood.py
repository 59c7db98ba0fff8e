"""Browsing a newspaper picture's caption neighbourhood across time (TICRC).

TICRC holds pictures from historical US newspapers (Chronicling America, 1853-1922),
each with the issue date and its caption.  A ``DiachronicEmbedder`` projects an
item *at an instant*: f(x, t).  So one can ask "which captions are closest to this
picture if we read it as of 1870? as of 1920?" by projecting the picture and every
caption of the archive at that year.  This script

1. loads TICRC ``train`` + ``train2`` and holds out 15 % of the pairs;
2. featurises the pictures with EfficientNet-Lite0 (1280-d pooled ImageNet features,
   cached on disk, so only the first run pays ~30 pictures/s) and the captions with
   TF-IDF, and stacks them with the date (fractional years) into
   ``X = [image | text | time]``;
3. fits a ``DiachronicEmbedder`` for a few epochs.  TICRC has no categories and
   exactly one caption per picture, so each pair is its own class
   (``y = arange(n)``): the counterpart is the only positive and every other caption
   a negative; time enters through the time-conditioned projections;
4. checks the model on the held-out pictures (MRR of the true caption among the
   held-out captions, each projected at the query picture's date: captions carry no
   date of their own) against a random ranking;
5. picks a held-out picture and prints its top captions when the picture and the
   whole archive of captions are projected at several years, how much of the
   neighbourhood is kept from one year to the next, and where the picture's own
   caption ranks.  ``--plot out.png`` also draws the picture and the similarity of
   its nearest captions as the projection year moves.

Without the data folder the script prints where it looked and exits with status 0.

Run from the repository root::

    python examples/ticrc_neighbourhood.py             # ~15 s (+ ~100 s once to cache
                                                       #   the 2,729 image features)
    python examples/ticrc_neighbourhood.py --fast      # 150 pictures, a few seconds
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
import torch
from sklearn.preprocessing import StandardScaler
from sklearn.utils import Bunch
from threadpoolctl import threadpool_limits

from temporal_xmodal import DiachronicEmbedder, TimeRangeWarning, stack_modalities
from temporal_xmodal.datasets import load_ticrc, ticrc_training_pairs
from temporal_xmodal.metrics import reciprocal_rank_per_query

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
# The neighbourhood of one picture at several instants
# --------------------------------------------------------------------------------------
def neighbourhood(model, image, texts, year):
    """Cosine of every caption to the picture, both projected at ``year``."""
    z_image = model.transform_image(image[None, :], time=year)
    return (model.transform_text(texts, time=year) @ z_image.T).ravel()


def browse(model, archive, query, years, top_k):
    """Print the top captions of picture ``query`` projected at each of ``years``."""
    captions, dates = archive.captions, archive.dates
    print(f"\nPicture #{query} ({Path(archive.paths[query]).name}), issue of {dates[query]:.2f}")
    print(f"  its caption: {short(captions[query], 90)!r}")
    print(f"  candidates: all {len(captions)} captions of the archive; (year) = issue date "
          "of the caption's own picture, shown for reading only")
    tops = {}
    for year in years:
        scores = neighbourhood(model, archive.images[query], archive.texts, year)
        order = np.argsort(-scores)
        own_rank = int(np.flatnonzero(order == query)[0]) + 1
        tops[year] = order[:top_k]
        print(f"\n  projected at {year:g}: own caption ranked {own_rank}; mean issue year of the "
              f"top {top_k}: {dates[order[:top_k]].mean():.0f}")
        for rank, j in enumerate(order[:top_k], 1):
            mark = "*" if j == query else " "
            print(f"   {rank:2d}.{mark} {scores[j]:.3f}  ({dates[j]:.0f})  {short(captions[j])}")
    print(f"\n  neighbourhood kept between consecutive years (shared captions among the top "
          f"{top_k}):")
    for a, b in zip(years[:-1], years[1:]):
        shared = len(set(tops[a]) & set(tops[b]))
        print(f"    {a:g} -> {b:g}: {shared}/{top_k}")
    return tops


def plot(model, archive, query, tops, path):
    """The picture and the similarity of its nearest captions along the years."""
    import matplotlib.pyplot as plt
    from PIL import Image

    captions, dates, years = archive.captions, archive.dates, list(tops)
    grid = np.linspace(dates.min(), dates.max(), 60)
    shown = list(dict.fromkeys(j for year in years for j in tops[year][:3]))  # top 3 per year
    curves = np.array([neighbourhood(model, archive.images[query], archive.texts[shown], t)
                       for t in grid])

    fig, (ax_pic, ax) = plt.subplots(1, 2, figsize=(13, 4.8), width_ratios=[1, 2.6])
    with Image.open(archive.paths[query]) as picture:
        ax_pic.imshow(picture.convert("RGB"))
    ax_pic.set_title(f"picture #{query}, issue of {dates[query]:.0f}\n"
                     + textwrap.fill(short(captions[query], 80), 32), fontsize=9)
    ax_pic.axis("off")
    for k, j in enumerate(shown):
        style = dict(lw=3, color="k") if j == query else dict(lw=1.5)
        ax.plot(grid, curves[:, k], label=f"({dates[j]:.0f}) {short(captions[j], 45)}", **style)
    for year in years:
        ax.axvline(year, color="grey", lw=0.8, ls=":")
    ax.axvline(dates[query], color="k", lw=0.8, ls="--")
    ax.set_xlabel("year at which picture and captions are projected")
    ax.set_ylabel("cosine similarity to the picture")
    ax.set_title("nearest captions of the picture as the projection year moves "
                 "(thick: its own caption; dashed: its issue date)", fontsize=9)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
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
    parser.add_argument("--years", type=float, nargs="+", default=[1870, 1890, 1905, 1920],
                        help="instants at which to project (default 1870 1890 1905 1920)")
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
    tops = browse(model, archive, query, sorted(args.years), args.top_k)
    if args.plot:
        plot(model, archive, query, tops, args.plot)


if __name__ == "__main__":
    main()
