"""The bad-input cases of issue 41 ("nothing silent, round 4"), run once each.

Part of the table of ``tests/_bad_input.py`` (:func:`issue41_cases` is its ``"issue 41"``
group; :func:`~_bad_input.classify` sorts their outcomes).  Each case carries the
``family`` of the issue it probes, and :data:`ISSUE41_OWNERS` the part of the library its fix
lives in, so that a family still being fixed elsewhere shows apart in
``benchmarks/probe_bad_input.py``.
"""

import warnings

import numpy as np
import pandas as pd
import torch
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from _probe_cases import family_cases
from temporal_xmodal import (
    BinnedProcrustesEmbedder,
    CCACrossModal,
    DiachronicEmbedder,
    SAMEmbedder,
    TempXNetEmbedder,
    make_crossmodal_transformer,
)
from temporal_xmodal.estimators import DatePriorRetrieval, all_estimators
from temporal_xmodal.scoring import RetrievalScorer
from temporal_xmodal.search import CrossModalIndex
from temporal_xmodal.training import BatchIterator, make_dataset

#: Which part of the library each family's fix lives in.
ISSUE41_OWNERS = {
    "pipe[-1] arrays": "search / base", "validation split": "estimators (_neural)",
    "bool counts": "validation", "NaT": "time", "rows as an array": "layout (_stacking)",
    "intra_balance": "estimators / losses", "tiny share": "time",
    "staged on cuda": "training (placement)", "still improving": "estimators (_neural)",
    "defaults fit": "estimators (date prior)", "paper settings": "registry",
}


def _data(n=90, seed=0):
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.standard_normal((n, 11)), np.linspace(2000.0, 2003.0, n)[:, None]])
    return X, np.arange(n) % 3


def _frame(n=90, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.standard_normal((n, 8)) * 50 + 100,
                      columns=[f"img_{i}" for i in range(4)] + [f"txt_{i}" for i in range(4)])
    df["year"] = np.linspace(2000.0, 2003.0, n)
    return df, np.arange(n) % 3


def _pipeline():
    df, y = _frame()
    pipe = make_pipeline(
        make_crossmodal_transformer("img_", "txt_", "year", image_transformer=StandardScaler(),
                                    text_transformer=StandardScaler()),
        CCACrossModal(embedding_dim=2, n_image_features="auto")).fit(df, y)
    return pipe, df, y


def issue41_cases(case_class, wrong_class):
    """The cases, as ``case_class`` instances with a ``family`` (``Case``, ``Wrong`` of
    ``tests/_bad_input.py``)."""
    small = dict(hidden_dim=8, embedding_dim=4, max_epochs=1, batch_size=16, random_state=0,
                 device="cpu", n_image_features=6)
    X, y = _data()

    def pipe_last_search():
        pipe, df, _ = _pipeline()
        return CrossModalIndex(pipe[-1], modality="text").fit(df.filter(like="txt_").to_numpy())

    def pipe_last_transform_text():
        pipe, df, _ = _pipeline()
        return pipe[-1].transform_text(df.filter(like="txt_").to_numpy())

    def pipe_last_transform_image():
        pipe, df, _ = _pipeline()
        return pipe[-1].transform_image(df.filter(like="img_").to_numpy())

    def validation_rounds_to_one_row():
        X120, y120 = _data(120)
        model = SAMEmbedder(**{**small, "max_epochs": 2}, validation_fraction=0.01)
        model.fit(X120, y120)
        columns = set(model.net_.history[-1])
        if not any(c.startswith("valid_") for c in columns):
            return wrong_class("validation_fraction=0.01 on 120 rows: no valid_* column, "
                               f"best_epoch_={model.best_epoch_}, no word")
        return model.transform(X120)

    def bool_max_epochs():
        return SAMEmbedder(**{**small, "max_epochs": True}).fit(X, y)

    def bool_embedding_dim():
        return SAMEmbedder(**{**small, "embedding_dim": True}).fit(X, y)

    def bool_fine_tune_epochs():
        base = TempXNetEmbedder(**{**small, "n_image_features": None}, temporal_weight=0.0)
        return BinnedProcrustesEmbedder(base, bins=2, min_bin_size=10, fine_tune_epochs=True,
                                        n_image_features=6).fit(X, y)

    def bool_k():
        return RetrievalScorer("map", k=True)

    def nat_time():
        model = CCACrossModal(embedding_dim=2, n_image_features=6).fit(X, y)
        return model.transform_image(X[:5, :6], time=pd.NaT)

    def rows_as_an_array():
        pipe, df, _ = _pipeline()
        return pipe.transform(df.to_numpy())

    def rows_as_an_array_search():
        pipe, df, _ = _pipeline()
        return CrossModalIndex(pipe, modality="text").fit(df.to_numpy())

    def intra_balance_huge():
        return DiachronicEmbedder(**small, window=0.5, decay="5%", intra_balance=1e38).fit(
            X, y).transform(X)

    def tiny_share():
        return RetrievalScorer("map", time_window="1e-400%")

    def small_share_is_fine():
        model = CCACrossModal(embedding_dim=2, n_image_features=6).fit(X, y)
        return RetrievalScorer("map", time_window="1e-3%")(model, X, y)

    def staged_on_cuda_without_gpu():
        if torch.cuda.is_available():
            return wrong_class("a GPU is present: the case needs a machine without one")
        dataset = make_dataset(X[:, :6].astype(np.float32), X[:, 6:-1].astype(np.float32),
                               np.eye(3, dtype=np.float32)[y])
        batches = BatchIterator(dataset, batch_size=16, device="cuda", placement="staged")
        return next(iter(batches))[1].numpy()

    def still_improving_text():
        # lr 0.1: still improving after 3 epochs (recent_gain 0.021 > 0.01)
        model = SAMEmbedder(**{**small, "max_epochs": 3}, lr=0.1)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            model.fit(X, y)
        texts = [str(w.message) for w in record if "still improving" in str(w.message)]
        if not texts:
            return wrong_class("no StillImprovingWarning: the case's fit must still improve")
        if any("last 5 epochs" in t for t in texts):
            return wrong_class("StillImprovingWarning says 'over the last 5 epochs' for a "
                               "3-epoch fit: " + texts[0][:120])
        return model.transform(X)

    def date_prior_defaults():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return DatePriorRetrieval(CCACrossModal()).fit(X, np.arange(len(X))).score(X)

    def paper_settings_all():
        for entry in all_estimators():
            if entry.paper is not None:
                entry.make("paper")._validate_params()
        return np.ones(1)

    cases = [
        ("pipe[-1] arrays", "search_on_pipe_last_with_an_array", pipe_last_search, "error",
         ["pipe[-1]"]),
        ("pipe[-1] arrays", "transform_text_on_pipe_last_with_an_array",
         pipe_last_transform_text, "error", ["pipe[-1]"]),
        ("pipe[-1] arrays", "transform_image_on_pipe_last_with_an_array",
         pipe_last_transform_image, "error", ["pipe[-1]"]),
        ("validation split", "validation_fraction_rounds_to_one_row",
         validation_rounds_to_one_row, "warn", ["validation"]),
        ("bool counts", "max_epochs_true", bool_max_epochs, "error", ["not a bool"]),
        ("bool counts", "embedding_dim_true", bool_embedding_dim, "error", ["not a bool"]),
        ("bool counts", "binned_fine_tune_epochs_true", bool_fine_tune_epochs, "error",
         ["not a bool"]),
        ("bool counts", "scorer_k_true", bool_k, "error", ["not a bool"]),
        ("NaT", "transform_image_at_pd_nat", nat_time, "error", ["missing date", "nat"]),
        ("rows as an array", "pipeline_transform_of_an_array", rows_as_an_array, "error",
         ["must be a dataframe"]),
        ("rows as an array", "pipeline_search_of_an_array", rows_as_an_array_search, "error",
         ["must be a dataframe"]),
        ("intra_balance", "diachronic_intra_balance_1e38", intra_balance_huge, "error",
         ["intra_balance", "diverged"]),
        ("tiny share", "time_window_1e-400%", tiny_share, "error", ["too small"]),
        ("tiny share", "time_window_1e-3%", small_share_is_fine, "ok", []),
        ("staged on cuda", "staged_placement_on_cuda_without_a_gpu",
         staged_on_cuda_without_gpu, "error", ["cuda", "gpu"]),
        ("still improving", "still_improving_text_of_a_3_epoch_fit", still_improving_text,
         "ok", []),
        ("defaults fit", "date_prior_retrieval_at_its_defaults", date_prior_defaults, "ok", []),
        ("paper settings", "make_paper_for_every_entry", paper_settings_all, "ok", []),
    ]
    return family_cases(case_class, cases, prefix="r4", family_in_name=False)
