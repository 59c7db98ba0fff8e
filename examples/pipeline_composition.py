"""Pipeline composition: per-modality featurisers -> cross-modal embedder -> classifier.

Every estimator of ``temporal_xmodal`` is a scikit-learn transformer: ``fit(X, y)``
learns a common image/text space and ``transform(X)`` returns
``[image embedding | text embedding]``.  It therefore slots into a
:class:`~sklearn.pipeline.Pipeline` like any other transformer.  This script shows:

1. **Synthetic data** (already featurised, ``X = [image | text | time]``): a
   ``ColumnTransformer`` standardises the image and the text blocks separately and
   passes the time column through *unchanged* (scaling it would change the units of
   time parameters such as Diachronic's ``window``), then an embedder, then a
   ``LogisticRegression`` that predicts the category from the embedding.  Swapping
   the embedder is one ``set_params`` call, ``"passthrough"`` included.  Because the
   space is shared, a classifier trained on *image* embeddings also works on
   *text* embeddings ("transfer" column).
2. **Raw inputs** (TICRC historical newspaper pictures with captions and dates, when
   the data folder exists): a ``ColumnTransformer`` over a DataFrame with one column
   per modality builds the ``[image | text | time]`` matrix from picture files
   (EfficientNet-Lite0, cached on disk) and caption strings (TF-IDF), then CCA, then
   a classifier that guesses the decade of the newspaper issue.  The same fitted
   featurisers + embedder also rank captions for a picture (``Pipeline.score``).

Run from the repository root::

    python examples/pipeline_composition.py           # the first run also caches
                                                       #   the TICRC image features
    python examples/pipeline_composition.py --fast     # tiny sizes

The TICRC data is looked up in ``$TEMPORAL_XMODAL_DATA/ticrc`` (default
``../shared/data`` next to the repository) and the image-feature cache in
``$TEMPORAL_XMODAL_CACHE`` (default ``~/.cache/temporal_xmodal``).
"""

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.dummy import DummyClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from temporal_xmodal import CCACrossModal, DiachronicEmbedder, SAMEmbedder, TimeRangeWarning
from temporal_xmodal.datasets import load_ticrc, make_temporal_crossmodal, ticrc_training_pairs

DATA_DIR = Path(os.environ.get("TEMPORAL_XMODAL_DATA",
                               Path(__file__).resolve().parents[2] / "shared" / "data"))
CACHE_DIR = os.environ.get("TEMPORAL_XMODAL_CACHE", "~/.cache/temporal_xmodal")


# --------------------------------------------------------------------------------------
# 1. Already-featurised data: scale each modality block, keep the time column as it is
# --------------------------------------------------------------------------------------
def block_scaler(n_image_features, n_text_features):
    """A ColumnTransformer for ``X = [image | text | time]`` that keeps the layout.

    ColumnTransformer concatenates its outputs in the order of its transformers, so
    image, text, time in that order gives back the library's layout.  A plain
    StandardScaler on the whole of X would also standardise the time column: the
    estimators would then read ``window``/``decay``/``bandwidth`` in standard
    deviations of time instead of in your time units.
    """
    n_features = n_image_features + n_text_features
    return ColumnTransformer([
        ("image", StandardScaler(), slice(0, n_image_features)),
        ("text", StandardScaler(), slice(n_image_features, n_features)),
        ("time", "passthrough", [n_features]),  # the last column, untouched
    ])


def synthetic_section(args):
    n_samples = 500 if args.fast else 2000
    X, y, info = make_temporal_crossmodal(n_samples, return_info=True, random_state=0)
    n_img, n_txt = info.n_image_features, info.n_text_features
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                        random_state=0)
    print(f"Synthetic data: X {X.shape} = [{n_img} image | {n_txt} text | time], "
          f"{len(np.unique(y))} categories; {len(X_train)} train / {len(X_test)} test rows")

    neural = dict(hidden_dim=64 if args.fast else 256, embedding_dim=32,
                  max_epochs=2 if args.fast else 15, random_state=0, n_image_features=n_img)
    embedders = {
        # no embedder: the classifier sees the scaled raw features (and the time column)
        "passthrough (no embedder)": "passthrough",
        "CCACrossModal": CCACrossModal(embedding_dim=16, n_image_features=n_img),
        "SAMEmbedder": SAMEmbedder(**neural),
        # window/decay are in the units of the (unscaled) time column, here 0..10
        "DiachronicEmbedder": DiachronicEmbedder(window=0.5, decay=2.0, **neural),
    }

    # The pipeline: per-block scaling -> embedder -> classifier on the embedding.
    # Pipeline.fit(X, y) hands y to every step, so the neural embedders get their labels.
    pipe = Pipeline([
        ("scale", block_scaler(n_img, n_txt)),
        ("embed", embedders["CCACrossModal"]),
        ("clf", LogisticRegression(max_iter=1000)),
    ])
    chance = DummyClassifier(strategy="most_frequent").fit(X_train, y_train).score(X_test, y_test)

    print(f"\n{'embedder':<27} {'accuracy':>8} {'transfer':>8} {'fit [s]':>8}")
    print("-" * 54)
    for name, embedder in embedders.items():
        pipe.set_params(embed=embedder)  # <- swapping the embedder is this one line
        start = time.perf_counter()
        pipe.fit(X_train, y_train)
        seconds = time.perf_counter() - start
        accuracy = pipe.score(X_test, y_test)  # the classifier's accuracy on the test rows
        transfer = modality_transfer(pipe, X_train, y_train, X_test, y_test)
        cell = "n/a" if transfer is None else f"{transfer:.3f}"
        print(f"{name:<27} {accuracy:>8.3f} {cell:>8} {seconds:>8.1f}")
    print(f"{'chance (most frequent)':<27} {chance:>8.3f}")
    print("accuracy: LogisticRegression on [image | text] embeddings of the test rows.\n"
          "transfer: LogisticRegression fitted on the IMAGE embeddings of the training rows,\n"
          "          scored on the TEXT embeddings of the test rows (needs a shared space).")

    # Everything before the classifier is itself a transformer with feature names.
    embedding = pipe[:-1]
    print(f"\npipe[:-1].transform(X_test[:3]).shape = {embedding.transform(X_test[:3]).shape}; "
          f"feature names {list(embedding.get_feature_names_out()[:2])} ... "
          f"{list(embedding.get_feature_names_out()[-1:])}")


def modality_transfer(pipe, X_train, y_train, X_test, y_test):
    """Accuracy of an image-embedding classifier on text embeddings (None without embedder)."""
    if isinstance(pipe.named_steps["embed"], str):  # "passthrough"
        return None  # raw image and text features live in different spaces
    Z_train, Z_test = pipe[:-1].transform(X_train), pipe[:-1].transform(X_test)
    d = Z_train.shape[1] // 2  # [image embedding | text embedding], D columns each
    clf = LogisticRegression(max_iter=1000).fit(Z_train[:, :d], y_train)
    return clf.score(Z_test[:, d:], y_test)


# --------------------------------------------------------------------------------------
# 2. Raw inputs: picture files + caption strings + dates, one DataFrame column each
# --------------------------------------------------------------------------------------
def ticrc_section(args):
    folder = DATA_DIR / "ticrc"
    if not folder.is_dir():
        print(f"TICRC data not found at {folder}: skipping the raw-input pipeline "
              "(set TEMPORAL_XMODAL_DATA to the folder holding ticrc/).")
        return
    try:
        import pandas as pd

        from temporal_xmodal.features import EfficientNetImageFeatures, TfidfTextFeatures
    except ImportError as exc:
        print(f"Skipping the raw-input pipeline: {exc} "
              "(pip install 'temporal-xmodal[features,pandas]').")
        return

    paths, captions, years = ticrc_training_pairs([load_ticrc(folder, "train"),
                                                   load_ticrc(folder, "train2")])
    n = 150 if args.fast else len(paths)  # --fast: the first 150 pictures (~5-10 s uncached)
    raw = pd.DataFrame({"picture": paths[:n], "caption": captions[:n], "year": years[:n]})
    # Target: decade of the issue; the few pictures before 1880 join the 1880s class.
    decade = np.maximum(raw["year"].to_numpy() // 10 * 10, 1880).astype(int)
    raw_train, raw_test, y_train, y_test = train_test_split(raw, decade, test_size=0.3,
                                                            stratify=decade, random_state=0)
    print(f"TICRC: {n} newspaper pictures ({int(raw['year'].min())}-{int(raw['year'].max())}) "
          f"with one caption each; {len(raw_train)} train / {len(raw_test)} test")
    print(raw.head(3).assign(picture=lambda d: d["picture"].map(lambda p: Path(p).name[:12]),
                             caption=lambda d: d["caption"].str.replace("\n", " / ").str[:40]))

    # One featuriser per modality column; the order image, text, time is the layout.
    # A single column name (not a list) hands the featuriser a 1-D column of paths/strings.
    # Each modality is reduced to a fixed width (PCA of the 1280-d EfficientNet
    # features, LSA of the TF-IDF vocabulary): CCA then whitens small covariance
    # matrices, and the image width, which the embedder must know, is the PCA's.
    width = 32 if args.fast else 128
    featurise = ColumnTransformer([
        ("image", make_pipeline(EfficientNetImageFeatures(cache_dir=CACHE_DIR, progress=False),
                                StandardScaler(), PCA(width, random_state=0)), "picture"),
        ("text", make_pipeline(TfidfTextFeatures(min_df=2),
                               TruncatedSVD(width, random_state=0)), "caption"),
        ("time", "passthrough", ["year"]),
    ])
    # CCA ignores time, so the embedding cannot simply copy the issue date: a
    # time-conditioned embedder (DiachronicEmbedder) would leak the target through
    # the date column here, and the classifier would just read the decade off it.
    pipe = Pipeline([
        ("features", featurise),
        ("embed", CCACrossModal(embedding_dim=width // 2, reg=0.1, n_image_features=width)),
        ("clf", LogisticRegression(max_iter=2000)),
    ])
    start = time.perf_counter()
    pipe.fit(raw_train, y_train)
    print(f"\nfitted featurisers + CCA + classifier on raw inputs in "
          f"{time.perf_counter() - start:.1f} s; X built by the ColumnTransformer: "
          f"{pipe[:-2].transform(raw_test[:1]).shape[1]} columns = [{width} image | {width} text "
          f"| time]")
    chance = DummyClassifier(strategy="most_frequent").fit(raw_train, y_train)
    print(f"decade accuracy {pipe.score(raw_test, y_test):.3f}  "
          f"(chance, most frequent decade: {chance.score(raw_test, y_test):.3f})")

    # The same fitted featurisers + embedder rank captions for pictures: without
    # labels, an embedder's score is the MRR of each picture's own caption.
    n_test = len(raw_test)
    random_mrr = np.sum(1.0 / np.arange(1, n_test + 1)) / n_test
    print(f"caption retrieval among the {n_test} test pairs: counterpart MRR "
          f"{pipe[:-1].score(raw_test):.3f}  (random ranking: {random_mrr:.3f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast", action="store_true", help="tiny sizes, a few seconds")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS and torch threads (default 1: small problems run "
                             "fastest single-threaded on a small shared CPU)")
    args = parser.parse_args()
    threadpool_limits(args.threads)  # numpy/scipy BLAS, used by sklearn and CCA
    torch.set_num_threads(args.threads)
    # Test rows can lie slightly outside the training time range of the
    # time-conditioned embedders; they extrapolate, which is fine here.
    warnings.simplefilter("ignore", TimeRangeWarning)
    # The example trains a few epochs to run in seconds, so the models are still
    # improving when training ends; a real fit should heed this warning.
    warnings.simplefilter("ignore", ConvergenceWarning)

    print("=" * 72 + "\n1. Synthetic data: scale per modality -> embedder -> classifier\n"
          + "=" * 72)
    synthetic_section(args)
    print("\n" + "=" * 72 + "\n2. Raw inputs: picture files + captions + dates -> ... "
          "-> classifier\n" + "=" * 72)
    ticrc_section(args)


if __name__ == "__main__":
    main()
