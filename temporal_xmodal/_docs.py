"""Shared documentation: one table of parameter and attribute texts, filled into docstrings.

A docstring line that holds only ``{key}`` (a key of :data:`PARAMETERS`, :data:`ATTRIBUTES`
or :data:`GROUPS`) is replaced by :func:`fill_doc` with those entries, at the placeholder's
indentation; a parameter entry states the documented class's own default.  Read more in
docs/adding_an_estimator.md, "Shared parameter documentation".
"""

import inspect
import re
import textwrap

_TIME_UNITS = '{"years", "months", "weeks", "days", "hours", "minutes", "seconds"}'

#: Shared parameters: name (or names sharing one entry, "a, b") -> (type, description).
#: ``{source}`` in a description is the documented class's ``_embedding_dim_source`` (its
#: paper), in brackets, or nothing.
PARAMETERS = {
    "embedding_dim": ("int", "Dimension D of the common space (``transform`` returns 2 D "
                             "columns); the default is the width of the estimator's "
                             "paper{source}."),
    "hidden_dim": ("int", "Width of each modality's hidden layer."),
    "dropout": ("float", "Dropout probability on the hidden layer."),
    "standardize": ("bool", "Centre each input feature on the training rows and divide each "
                            "modality's block by the root mean square of its centred "
                            "features, as the network's first operation (no copy of X); "
                            "``False``: the features as they are (the papers').  Read more in "
                            "docs/estimators/diachronic.md, \"Input standardisation\"."),
    "max_epochs": ("int", "Training epochs per ``fit``."),
    "batch_size": ("int", "Mini-batch size b; in-batch negatives come from the same batch."),
    "lr": ("float", "Learning rate η; the papers' SGD settings are "
                    "``est.set_params(**paper_settings(est))`` "
                    "(:func:`~temporal_xmodal.paper_settings`)."),
    "optimizer": ('{"sgd", "adam", "adamw"} or torch.optim.Optimizer subclass',
                  "The optimiser."),
    "momentum": ("float", "SGD momentum (ignored by other optimisers)."),
    "nesterov": ("bool", "Nesterov momentum for SGD."),
    "lr_decay": ("float", "Keras-style decay: the learning rate at optimiser step i is "
                          "η / (1 + lr_decay · i); 0 disables it."),
    "validation_fraction": ("float", "Fraction of the training rows held out to select the "
                                     "checkpoint (and stop early); 0 trains on every row for "
                                     "``max_epochs`` epochs."),
    "patience": ("int or None", "Stop after this many epochs without improvement of "
                                "``selection_metric``; ``None`` trains every epoch.  Either "
                                "way the best epoch's weights are restored."),
    "selection_metric": ('{"valid_map", "valid_tmap", "valid_loss"}',
                         "Validation figure that selects the checkpoint: category mAP, "
                         "time-window mAP@50 (same category within 5 % of the span of the "
                         "training times, each item at its own time; Semedo & Magalhães, "
                         "ACM MM 2019), or the loss."),
    "device": ("str or torch.device", '``"auto"`` uses CUDA when available.'),
    "random_state": ("int, RandomState or None", "Seeds weight initialisation, shuffling, "
                                                 "dropout and the validation split; the same "
                                                 "seed gives the same embeddings on the CPU."),
    "verbose": ("int", "> 0 prints skorch's epoch table, with the fit's progress and the "
                       "time left."),
    "callbacks": ("list of skorch callbacks or None", "Extra callbacks, appended to the "
                                                       "library's."),
    "warm_start": ("bool", "Continue training the fitted net on the next ``fit``; X must have "
                           "the fitted layout, and the time axis stays the first fit's."),
    "compile_step": ('bool, "auto" or dict', "Run each training step's forward and loss as "
                                              "one ``torch.compile`` graph; ``\"auto\"``: on "
                                              "CUDA only; a dict: ``torch.compile``'s keyword "
                                              "arguments.  Falls back to the eager step with "
                                              "a warning when torch cannot compile it "
                                              "(docs/training.md, \"A compiled step\")."),
    "keep_training_state": ("bool", "Whether a pickle keeps what only more training needs "
                                    "(optimiser state, callbacks, validation split); "
                                    "``False`` keeps what inference and a warm start need "
                                    "(docs/saving.md)."),
    "n_image_features": ('int, "auto" or None',
                         "Leading image columns of X.  ``\"auto\"`` reads the image and text "
                         "blocks from the column names (two prefixes such as ``img_0…`` / "
                         "``txt_0…``, or the ``image__`` / ``text__`` names of "
                         ":func:`~temporal_xmodal.make_crossmodal_transformer`).  ``None`` "
                         "does the same when the names show two blocks, and otherwise splits "
                         "the non-time columns in half (the larger half to the images) with "
                         "a :class:`~temporal_xmodal.LayoutWarning`.  An int that "
                         "contradicts the names raises a ``ValueError``."),
    "time_unit": (_TIME_UNITS, "Unit of the time axis: dates are mapped to it, and numbers "
                               "(times, and durations given as numbers) are read in it."),
    "use_time": ("bool", "``True``: train and project with the times (the published method).  "
                         "``False``: the constant-time control, every time set to one "
                         "instant (a static model of this method, projected there whatever "
                         "``time=`` says).  A warm start keeps the first fit's setting.  Read "
                         "more in docs/time.md, \"Does time pay?\"."),
    "negatives": ('{"different_category", "all_non_matching"}',
                  "In-batch negatives of an anchor: the items that share no label with it, "
                  "or every other item."),
    "loss_reduction": ('{"sum_per_anchor", "sum", "mean_active"}',
                       "A batch's hinges summed and divided by the batch size, summed, or "
                       "averaged over the positive ones."),
    # the retrieval metrics' (temporal_xmodal.metrics)
    "query": ("array-like of shape (n_queries, dim)", "Query embeddings."),
    "gallery": ("array-like of shape (n_gallery, dim)", "Gallery embeddings in the same space."),
    "query_labels, gallery_labels": ("array-like or None",
                                     "1-D class labels or 2-D multilabel indicators (relevant "
                                     "= shares at least one label).  ``None`` for both: query "
                                     "``i``'s only relevant item is gallery item ``i`` (its "
                                     "counterpart)."),
    "query_time, gallery_time": ("array-like of shape (n,) or None",
                                 "Timestamps, needed with ``time_window``."),
    "time_window": ("float or None", "Relevant additionally requires ``|t_query - t_gallery| "
                                     "<= time_window`` (in the unit of the times)."),
    "time_filter": ("float or None", "The date filter: a query's candidates are only the "
                                     "gallery items within ``time_filter`` of its time (the "
                                     "figure of a search restricted to that window, in the "
                                     "unit of the times); needs the times."),
    "similarity": ('{"dot", "cosine", "hamming"}',
                   "Score of a pair (see :func:`iter_score_blocks`)."),
    "working_memory": ("float or None", "Budget of the blocks in flight, in MiB (default 64)."),
    "n_jobs": ("int or None", "Threads evaluating blocks in parallel (``None``: 1, ``-1``: all "
                              "cores)."),
    "nan_policy": ('{"raise", "omit"}', "Items with a NaN label (or time, under "
                                        "``time_window`` or ``time_filter``): raise, or leave "
                                        "them out with a warning."),
}

#: Shared fitted attributes: name -> (type or None, description).
ATTRIBUTES = {
    "net_": ("CrossModalNet", "The fitted skorch net; ``net_.history`` holds the per-epoch "
                              "figures."),
    "embedding_dim_": ("int", "Dimension D of the common space."),
    "fit_report_": ("FitReport", "The last fit's outcome (epochs run, the epoch kept and why, "
                                 "its figure, still improving, interrupted): "
                                 ":class:`~temporal_xmodal.training.FitReport`.  A fit that "
                                 "was still improving warns with a "
                                 ":class:`~temporal_xmodal.StillImprovingWarning`."),
    "best_epoch_": ("int", "Epoch (1-based, over ``net_.history``) whose weights are kept; a "
                           "view of ``fit_report_``."),
    "convergence_": ("dict", "How the last fit ended "
                             "(:meth:`~temporal_xmodal.training.FitReport.convergence`); a "
                             "view of ``fit_report_``."),
    "training_interrupted_": ("bool", "Whether Ctrl-C stopped the last fit (``fit`` then warns "
                                      "with a "
                                      ":class:`~temporal_xmodal.training."
                                      "TrainingInterruptedWarning`); a view of "
                                      "``fit_report_``."),
    "uses_time_": ("bool", "Whether the fitted model uses time (``False``: the constant-time "
                           "control, which projects every item at one instant)."),
    "n_features_in_, feature_names_in_, n_image_features_, n_text_features_, time_axis_, "
    "time_range_": (None, "See :class:`~temporal_xmodal.base.CrossModalEmbedder`."),
}

_LAYOUT_ATTRIBUTES = next(name for name in ATTRIBUTES if name.startswith("n_features_in_"))

#: Placeholders that stand for several entries, in order.
GROUPS = {
    "layout_parameters": ("n_image_features", "time_unit"),
    "training_parameters": (
        "embedding_dim", "hidden_dim", "dropout", "standardize", "max_epochs", "batch_size",
        "lr", "optimizer", "momentum", "nesterov", "lr_decay", "validation_fraction",
        "patience", "selection_metric", "device", "random_state", "verbose", "callbacks",
        "warm_start", "compile_step", "keep_training_state", "n_image_features", "time_unit"),
    "triplet_parameters": ("negatives", "loss_reduction"),
    "layout_attributes": (_LAYOUT_ATTRIBUTES,),
    "neural_attributes": ("net_", "embedding_dim_", "best_epoch_", "convergence_",
                          "training_interrupted_", "fit_report_", _LAYOUT_ATTRIBUTES),
    "scan_parameters": ("query", "gallery", "query_labels, gallery_labels"),
    "scan_options": ("query_time, gallery_time", "time_window", "time_filter", "similarity",
                     "working_memory", "n_jobs", "nan_policy"),
}

_PLACEHOLDER = re.compile(r"^( *)\{(\w+)\}$", re.M)


def _entry(name, kind, text, indent, default=inspect.Parameter.empty):
    """One numpydoc entry: its name line (with ``default=``) and its wrapped description."""
    head = name if kind is None else f"{name} : {kind}"
    if default is not inspect.Parameter.empty:
        head += f', default={default!r}' if not isinstance(default, str) \
            else f', default="{default}"'
    body = textwrap.fill(text, 88, initial_indent=" " * (indent + 4),
                         subsequent_indent=" " * (indent + 4))
    return f"{' ' * indent}{head}\n{body}"


def fill_doc(obj):
    """Decorator: replace the placeholder lines of ``obj.__doc__`` by the shared entries.

    Parameters
    ----------
    obj : class or function
        A class's parameter defaults are those of its ``__init__``, a function's its own.

    Returns
    -------
    obj : class or function
        The same object, its ``__doc__`` filled in (untouched under ``python -OO``).

    Raises
    ------
    KeyError
        A placeholder that is no key of the table.
    """
    if obj.__doc__ is None:  # python -OO
        return obj
    signature = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj)
    source = getattr(obj, "_embedding_dim_source", "")

    def entries(match):
        indent, key = len(match.group(1)), match.group(2)
        out = []
        for name in GROUPS.get(key, (key,)):
            if name in ATTRIBUTES:
                out.append(_entry(name, *ATTRIBUTES[name], indent))
                continue
            kind, text = PARAMETERS[name]
            text = text.replace("{source}", f" ({source})" if source else "")
            default = signature.parameters[name.split(",")[0]].default  # "a, b": a's
            out.append(_entry(name, kind, text, indent, default))
        return "\n".join(out)

    obj.__doc__ = _PLACEHOLDER.sub(entries, obj.__doc__)
    return obj
