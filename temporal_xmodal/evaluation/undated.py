"""Retrieval against an undated gallery: the TICRC protocol, for any estimator.

In TICRC (spec ``sequential_ticrc_cca.md`` §B) every query picture carries its
issue date but the candidate captions carry none.  A time-conditioned model
therefore projects every candidate caption **at the query picture's date**;
ranking captions with the date of the picture they belong to would use the
answer (``DESIGN.md``).  This module holds the honest pieces:

* :func:`query_time_scores`: the score matrix, captions projected at each
  query's date (one text projection per distinct query date);
* :func:`counterpart_reciprocal_ranks`: reciprocal rank of the gold item in
  both directions (item ``i`` of the queries pairs with item ``i`` of the
  gallery; ties count against the query);
* :func:`random_mrr`: the expected MRR of a random ranking;
* :func:`date_prior_scores`: the honest date-only baseline, which infers each
  caption's date distribution from the words it shares with dated training
  captions.
"""

import numpy as np

from ..metrics import reciprocal_rank_per_query
from ..time import time_use, to_time_axis
from ._caption_prior import CaptionDatePrior


def query_time_scores(estimator, X_image, X_text, query_time, *, calibrate=True):
    """Similarity of each query image to every candidate text, texts projected at the query's date.

    ``S[i, j] = <f_image(x_i, t_i), f_text(c_j, t_i)>`` with L2-normalised
    embeddings.  Both directions of the TICRC evaluation read this one matrix:
    rows rank captions for a picture (I→T), columns rank pictures for a
    caption (T→I; the caption is projected at each candidate picture's date).
    Estimators whose projection ignores time at inference are projected once.

    Parameters
    ----------
    estimator : fitted CrossModalEmbedder
    X_image : array-like of shape (n_queries, n_image_features)
    X_text : array-like of shape (n_candidates, n_text_features)
    query_time : array-like of shape (n_queries,)
        The date of each query picture: numbers on the estimator's time axis
        (its ``time_unit``) or dates.
    calibrate : bool, default=True
        For an estimator whose projection depends on the time: standardise the scores of
        each query date (zero mean, unit variance over that date's queries × all
        candidates).  A column of ``S`` compares scores of one caption projected at
        different dates, and a time-conditioned model's similarities have a scale of their
        own at each date (Diachronic's FiLM modulates every unit by the date), so raw columns
        rank pictures by their date's scale as much as by content.  The standardisation is
        increasing within a date, so every picture's ranking of the captions (I→T) is
        unchanged; it reads no caption date and no gold pair.  On TICRC (seed 0) it raised
        Diachronic's caption → picture MRR from 0.061 to 0.111 (its constant-time control:
        0.139).  ``False``: the raw cosines.

    Returns
    -------
    scores : ndarray of shape (n_queries, n_candidates)
    """
    query_time = to_time_axis(query_time, estimator.time_unit, name="query_time")
    Z_image = estimator.transform_image(X_image, time=query_time)
    if time_use(estimator) != "inference":
        return Z_image @ estimator.transform_text(X_text).T
    instants, which = np.unique(query_time, return_inverse=True)
    scores = np.empty((Z_image.shape[0], np.shape(X_text)[0]))
    for k, instant in enumerate(instants):  # one text projection per distinct date
        rows = which == k
        block = Z_image[rows] @ estimator.transform_text(X_text, time=instant).T
        if calibrate:
            std = block.std()
            block = (block - block.mean()) / (std if std > 0 else 1.0)
        scores[rows] = block
    return scores


def counterpart_reciprocal_ranks(scores):
    """Reciprocal rank of each item's counterpart, in both directions.

    Parameters
    ----------
    scores : array-like of shape (n, n)
        ``scores[i, j]``: similarity of query image ``i`` and candidate text
        ``j``; the gold text of image ``i`` is text ``i``.

    Returns
    -------
    rr_i2t : ndarray of shape (n,)
        Rank of text ``i`` among all texts for image ``i`` (row-wise).
    rr_t2i : ndarray of shape (n,)
        Rank of image ``i`` among all images for text ``i`` (column-wise).
        Ties count against the query
        (:func:`temporal_xmodal.metrics.reciprocal_rank_per_query`).
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[0] != scores.shape[1]:
        raise ValueError(f"scores must be a square (n, n) matrix; got shape {scores.shape}.")
    gold = np.eye(scores.shape[0], dtype=bool)
    return (reciprocal_rank_per_query(scores, gold),
            reciprocal_rank_per_query(scores.T, gold))


def random_mrr(n_candidates):
    """Expected MRR of a random ranking with one relevant item among ``n_candidates``.

    Parameters
    ----------
    n_candidates : int

    Returns
    -------
    mrr : float
        ``H_N / N`` (the harmonic number over N).
    """
    return float(np.sum(1.0 / np.arange(1, n_candidates + 1)) / n_candidates)


def date_prior_scores(reference_text, reference_time, candidate_text, query_time, *,
                      n_neighbors=25, bandwidth=2.0):
    r"""Date-only ranking: how likely the query's date is for each caption, from its words.

    Captions carry no date, so a date-only ranking must infer one from the
    caption itself.  Each candidate caption's date distribution is a kernel
    density over the dates of its ``n_neighbors`` most similar *reference*
    (training) captions, weighted by cosine similarity:

    .. math::

        s(q, c) = \frac{\sum_{j \in N_k(c)} \mathrm{sim}(c, j)\,
                  \exp\!\left(-\frac{(t_q - t_j)^2}{2h^2}\right)}
                 {\sum_{j \in N_k(c)} \mathrm{sim}(c, j)}

    and captions are ranked by :math:`s(q, c) \propto p(t_q \mid c)` — the
    Bayes ranking of the candidates given only the query's date, with a flat
    prior over candidates.  A caption sharing no word with the reference
    captions gets the global date prior (all reference dates, equal weights).
    It is :class:`~temporal_xmodal.evaluation.CaptionDatePrior` with ``floor=0``
    (memory-bounded blocks), scaled by :math:`h\sqrt{2\pi}`.
    Only the query date, the candidates' text and the training pairs are
    used: no held-out answer.

    Parameters
    ----------
    reference_text : array-like of shape (n_reference, n_text_features)
        L2-normalised text features (e.g. TF-IDF) of the training captions.
    reference_time : array-like of shape (n_reference,)
        Their dates (the dates of their training pictures).
    candidate_text : array-like of shape (n_candidates, n_text_features)
        L2-normalised text features of the candidate captions.
    query_time : array-like of shape (n_queries,)
        The query pictures' dates.
    n_neighbors : int, default=25
        Reference captions per candidate.
    bandwidth : float, default=2.0
        Gaussian kernel width ``h``, in the time unit (years for TICRC).

    Returns
    -------
    scores : ndarray of shape (n_queries, n_candidates)
    """
    R = np.asarray(reference_text, dtype=np.float64)
    if R.shape[0] != len(reference_time):
        raise ValueError(f"reference_text has {R.shape[0]} rows but reference_time "
                         f"{len(reference_time)}.")
    prior = CaptionDatePrior(n_neighbors, bandwidth, floor=0.0).fit(R, reference_time)
    # p(t_q | c) up to the kernel's constant 1 / (h sqrt(2 pi)), the same for every pair
    return np.exp(prior.log_density(candidate_text, query_time)) * bandwidth * np.sqrt(2 * np.pi)
