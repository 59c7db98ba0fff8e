"""Command line: ``python -m temporal_xmodal compare [options]``."""

import argparse
import sys

from .compare import DATASETS, run_compare


def main(argv=None):
    """Entry point of ``python -m temporal_xmodal`` and the ``temporal-xmodal`` script.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    status : int
        0 on success, 2 when the data folder (or an optional dependency of
        the data set) is missing.
    """
    parser = argparse.ArgumentParser(prog="python -m temporal_xmodal",
                                     description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    cmp_ = sub.add_parser("compare", help="fit every estimator side by side and compare them")
    cmp_.add_argument("--dataset", choices=DATASETS, default="synthetic",
                      help="synthetic (embedded, default), wiki (Wikipedia benchmark, undated) "
                           "or ticrc (dated newspaper pictures and captions)")
    cmp_.add_argument("--data-dir", default=None,
                      help="folder holding wiki/ and ticrc/ (default: $TEMPORAL_XMODAL_DATA, "
                           "else ../shared/data relative to the current directory)")
    cmp_.add_argument("--cache-dir", default=None,
                      help="ticrc image feature cache (default: $TEMPORAL_XMODAL_CACHE, else "
                           "~/.cache/temporal_xmodal)")
    cmp_.add_argument("--output", default="compare_output",
                      help="folder for results.json and the plots (default: %(default)s)")
    cmp_.add_argument("--n-samples", type=int, default=None,
                      help="items used, train + test: synthetic data set size (default 3000); "
                           "wiki/ticrc: a random subset in the split's proportions (default: all)")
    cmp_.add_argument("--seed", type=int, default=0)
    cmp_.add_argument("--max-epochs", type=int, default=None,
                      help="epochs of the neural estimators (default: the papers' values)")
    cmp_.add_argument("--no-plots", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "compare":
        try:
            run_compare(args.dataset, args.output, n_samples=args.n_samples,
                        random_state=args.seed, plots=not args.no_plots,
                        max_epochs=args.max_epochs, data_dir=args.data_dir,
                        cache_dir=args.cache_dir)
        except (FileNotFoundError, ImportError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return 0
