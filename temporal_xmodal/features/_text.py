"""Text featuriser: TF-IDF bag of words (the papers' text features)."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._constraints import Interval


def check_documents(X, name="X"):
    """A list of strings from a list / tuple / 1-D array / Series of strings."""
    if isinstance(X, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of strings (one per item), not a single "
                        "string; wrap it in a list.")
    if hasattr(X, "ndim") and X.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one string per item); got shape {X.shape}.")
    documents = list(X)
    if not documents:
        raise ValueError(f"{name} is empty: at least one document is needed.")
    for i, doc in enumerate(documents):
        if not isinstance(doc, str):
            raise TypeError(f"{name}[{i}] is {type(doc).__name__}, not str; "
                            "text features need one string per item.")
    return documents


class TfidfTextFeatures(TransformerMixin, BaseEstimator):
    r"""TF-IDF bag-of-words features of captions, as a float32 matrix (dense or CSR).

    A thin wrapper of :class:`sklearn.feature_extraction.text.TfidfVectorizer`: tf(w, d) ·
    log(N / df(w)) (Semedo, thesis, Eq. 2.1), with scikit-learn's smoothed idf and l2 row
    normalisation, returned dense to stack into ``X = [image | text | time]``, or as CSR with
    ``sparse_output=True`` (docs/scaling.md, "Sparse text").  Read more in docs/datasets.md.

    Parameters
    ----------
    max_features : int or None, default=4096
        Keep the most frequent terms (``None``: all terms above ``min_df``).
    min_df : int or float, default=2
        Ignore terms in fewer documents (a count, or a fraction if float).
    max_df : int or float, default=1.0
        Ignore terms in more documents (a count, or a fraction if float).
    sublinear_tf : bool, default=True
        Use 1 + log(tf) instead of tf.
    lowercase : bool, default=True
        Lowercase the text before tokenising.
    ngram_range : tuple (min_n, max_n), default=(1, 1)
        Range of n-gram lengths.
    stop_words : {"english"}, list or None, default=None
        Words left out of the vocabulary.
    strip_accents : {"ascii", "unicode"} or None, default=None
        Accent removal before tokenising.
    norm : {"l2", "l1"} or None, default="l2"
        Row normalisation.
    sparse_output : bool, default=False
        Return a float32 ``scipy.sparse.csr_matrix`` (the same values) instead of a dense array.

    Attributes
    ----------
    vectorizer_ : TfidfVectorizer
        The fitted vectoriser.
    vocabulary_ : dict
        Term → column.
    n_features_out_ : int
        Number of output columns (vocabulary size).

    Examples
    --------
    >>> from temporal_xmodal.features import TfidfTextFeatures
    >>> tf = TfidfTextFeatures(min_df=1).fit(["a red car", "a blue car", "tea"])
    >>> tf.transform(["red tea"]).shape, tf.transform(["red tea"]).dtype
    ((1, 4), dtype('float32'))
    """

    _parameter_constraints = {
        "max_features": [Interval(Integral, 1, None, closed="left"), None],
        "min_df": [Interval(Integral, 1, None, closed="left"),
                   Interval(Real, 0, 1, closed="both")],
        "max_df": [Interval(Integral, 1, None, closed="left"),
                   Interval(Real, 0, 1, closed="both")],
        "sublinear_tf": ["boolean"],
        "lowercase": ["boolean"],
        "ngram_range": [tuple],
        "stop_words": [StrOptions({"english"}), list, None],
        "strip_accents": [StrOptions({"ascii", "unicode"}), None],
        "norm": [StrOptions({"l1", "l2"}), None],
        "sparse_output": ["boolean"],
    }

    def __init__(self, max_features=4096, min_df=2, max_df=1.0, sublinear_tf=True,
                 lowercase=True, ngram_range=(1, 1), stop_words=None, strip_accents=None,
                 norm="l2", sparse_output=False):
        self.max_features = max_features
        self.min_df = min_df
        self.max_df = max_df
        self.sublinear_tf = sublinear_tf
        self.lowercase = lowercase
        self.ngram_range = ngram_range
        self.stop_words = stop_words
        self.strip_accents = strip_accents
        self.norm = norm
        self.sparse_output = sparse_output

    def fit(self, X, y=None):
        """Learn the vocabulary and idf weights.

        Parameters
        ----------
        X : sequence of str
            One document (caption) per item.
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._validate_params()
        documents = check_documents(X)
        self.vectorizer_ = TfidfVectorizer(
            max_features=self.max_features, min_df=self.min_df, max_df=self.max_df,
            sublinear_tf=self.sublinear_tf, lowercase=self.lowercase,
            ngram_range=self.ngram_range, stop_words=self.stop_words,
            strip_accents=self.strip_accents, norm=self.norm, dtype=np.float32,
        )
        try:
            self.vectorizer_.fit(documents)
        except ValueError as exc:  # e.g. "empty vocabulary" with a tiny corpus and min_df
            raise ValueError(f"TfidfTextFeatures could not build a vocabulary from "
                             f"{len(documents)} documents (min_df={self.min_df!r}, "
                             f"max_df={self.max_df!r}): {exc}") from exc
        self.vocabulary_ = self.vectorizer_.vocabulary_
        self.n_features_out_ = len(self.vocabulary_)
        return self

    def transform(self, X):
        """TF-IDF rows of the documents.

        Parameters
        ----------
        X : sequence of str
            One document (caption) per item.

        Returns
        -------
        X_text : ndarray or CSR matrix of float32, shape (n_documents, n_features_out_)
            CSR with ``sparse_output=True``.
        """
        check_is_fitted(self, "vectorizer_")
        rows = self.vectorizer_.transform(check_documents(X)).astype(np.float32, copy=False)
        return rows.tocsr() if self.sparse_output else rows.toarray()

    def get_feature_names_out(self, input_features=None):
        """The vocabulary terms, in column order."""
        check_is_fitted(self, "vectorizer_")
        return self.vectorizer_.get_feature_names_out()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        return tags
