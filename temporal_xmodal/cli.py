"""Command line: ``python -m temporal_xmodal compare [options]``."""

import argparse

from .compare import run_compare


def main(argv=None):
    """Entry point of ``python -m temporal_xmodal`` and the ``temporal-xmodal`` script.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    status : int
    """
    parser = argparse.ArgumentParser(prog="python -m temporal_xmodal",
                                     description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    cmp_ = sub.add_parser("compare", help="fit every estimator side by side and compare them")
    cmp_.add_argument("--dataset", choices=["synthetic"], default="synthetic")
    cmp_.add_argument("--output", default="compare_output",
                      help="folder for results.json and the plots (default: %(default)s)")
    cmp_.add_argument("--n-samples", type=int, default=3000,
                      help="synthetic data set size (default: %(default)s)")
    cmp_.add_argument("--seed", type=int, default=0)
    cmp_.add_argument("--max-epochs", type=int, default=None,
                      help="epochs of the neural estimators (default: the papers' values)")
    cmp_.add_argument("--no-plots", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "compare":
        run_compare(args.dataset, args.output, n_samples=args.n_samples,
                    random_state=args.seed, plots=not args.no_plots,
                    max_epochs=args.max_epochs)
    return 0
