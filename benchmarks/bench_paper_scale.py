"""Benchmark: the DCM paper's setting on this machine, then 10⁶ CLIP-sized items.

The DCM paper (Semedo & Magalhães, ACM MM 2019) trains on 709,033 Flickr items: 2048-d
ResNet-50 image features, TF-IDF text (a vocabulary the paper does not report; 20,000 terms
here, ~23 terms a caption), monthly dates over about 20 years, 21 categories; 574,308
train / 63,804 validation / 70,921 test items.  This benchmark builds synthetic items of that
shape and runs what a user would:

* ``paper``: ``X`` is one float32 CSR ``[image | text | time]`` (a ``ColumnTransformer``'s
  output for dense image features and a sparse TF-IDF block: the image block is stored
  densely inside the CSR), built row chunk by row chunk (the generator never holds a dense
  copy).  ``DiachronicEmbedder`` at the paper's sizes (hidden 1024, time 200, D 200, batch
  64; the library's defaults otherwise) fits one epoch on the 638,112 training + validation
  rows (``validation_fraction=0.1``: 63,812 validation rows, its ``valid_map`` on a 5,000-
  query sample), then embeds the 70,921 test items and computes their exact coarse mAP
  (full rankings, both directions), timed beside a reference written here (block matmul +
  one ``argsort`` per row, the usual implementation) on a query sample of the same gallery.
* ``clip``: 10⁶ items of 512 + 512 dense float32 features (900,000 train, 100,000 test), the
  same fit and evaluation.

``--train-batches N`` truncates the training pass of the epoch to its first N batches (the
shuffled order; everything else runs at full size: the data, the standardisation, the
validation pass and its scoring, the test embedding and the exact mAP), and the epoch's
time is extrapolated from them: one paper epoch is 8,974 batches of 64, an hour or more on 2
CPU cores.  ``--train-batches 0`` runs the whole epoch.

Memory: the peak resident set of the fit (``VmHWM`` reset after the data is built) minus
the resident set before the data, against the data's bytes (the CSR arrays, or the dense X).
Target (issue 55): peak ≤ data + 2 GiB.

Results: ``benchmarks/results/bench_paper_scale.json``.  Run one case per process
(``--case paper`` / ``--case clip``); ``--quick``: a small smoke run of both.
"""

import json
import time
import warnings

import numpy as np
from _common import make_parser, print_header, print_targets, target, write_results
from bench_scale_fit import _status, time_retrieval_scoring, truncated_iterator

NAME = "bench_paper_scale"
PAPER = {"n_train": 638_112, "n_test": 70_921, "image": 2048, "vocabulary": 20_000,
         "terms": 23, "categories": 21, "months": 240}
CLIP = {"n_train": 900_000, "n_test": 100_000, "image": 512, "text": 512, "categories": 21,
        "months": 240}
QUICK = {"paper": {**PAPER, "n_train": 6000, "n_test": 1500, "image": 256, "vocabulary": 3000},
         "clip": {**CLIP, "n_train": 6000, "n_test": 1500, "image": 64, "text": 64}}
GIB = 2 ** 30


# ------------------------------------------------------------------- memory
def reset_peak():
    """Reset ``VmHWM`` to the current resident set (Linux)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


# --------------------------------------------------------------------- data
class World:
    """The latent structure both splits are drawn from: category centroids that drift over
    three eras, a topical vocabulary per category and era, a background Zipf vocabulary."""

    def __init__(self, sizes, seed=0):
        rng = np.random.default_rng(seed)
        self.sizes = sizes
        k, latent = sizes["categories"], 64
        self.centres = rng.standard_normal((3, k, latent)).astype(np.float32)
        self.centres[1:] = 0.7 * self.centres[:1] + 0.5 * self.centres[1:]  # drift by era
        self.image_map = (rng.standard_normal((latent, sizes["image"])) / 8).astype(np.float32)
        if "vocabulary" in sizes:
            V = sizes["vocabulary"]
            ranks = np.arange(1, V + 1)
            self.background = (1 / ranks) / (1 / ranks).sum()
            self.topics = rng.permutation(V)[:3 * k * 40].reshape(3, k, 40)  # 40 topic terms
            self.idf = np.log(1.0 / np.maximum(self.background, 1e-9)).astype(np.float32)
        else:
            self.text_map = (rng.standard_normal((latent, sizes["text"])) / 8).astype(
                np.float32)

    def rows(self, n, rng):
        """``n`` items: labels, times (years, monthly), era and latent vectors."""
        y = rng.integers(self.sizes["categories"], size=n)
        month = rng.integers(self.sizes["months"], size=n)
        era = np.minimum(month * 3 // self.sizes["months"], 2)
        z = self.centres[era, y] + 0.8 * rng.standard_normal((n, self.centres.shape[2]),
                                                                dtype=np.float32)
        return y, 2000.0 + month / 12.0, era, z

    def image(self, z, rng):
        """Non-negative dense features, like pooled ReLU activations (no zero)."""
        x = z @ self.image_map + 0.5 * rng.standard_normal((len(z), self.image_map.shape[1]),
                                                           dtype=np.float32)
        return np.abs(x) + 1e-3

    def captions(self, y, era, rng):
        """TF-IDF rows as (row, column, value) of unique terms, L2-normalised per row:
        ~``terms`` words a caption, half from the category's topic of its era."""
        n = len(y)
        counts = 1 + rng.poisson(self.sizes["terms"] - 1, size=n)
        row = np.repeat(np.arange(n), counts)
        topical = rng.random(row.size) < 0.5
        term = rng.choice(len(self.background), size=row.size, p=self.background)
        pick = rng.integers(self.topics.shape[2], size=int(topical.sum()))
        term[topical] = self.topics[era[row[topical]], y[row[topical]], pick]
        key = np.unique(row.astype(np.int64) * len(self.background) + term)
        row, term = key // len(self.background), key % len(self.background)
        value = self.idf[term]
        norms = np.sqrt(np.bincount(row, weights=value.astype(np.float64) ** 2, minlength=n))
        return row, term, (value / norms[row]).astype(np.float32)


def make_csr(world, n, seed, chunk=20_000):
    """The paper-shaped CSR ``X = [image | text | time]`` of ``n`` items and their labels,
    filled chunk by chunk into preallocated CSR arrays (float32 values, int32 columns)."""
    from scipy import sparse

    rng = np.random.default_rng(seed)
    d, V = world.sizes["image"], world.sizes["vocabulary"]
    parts, labels, nnz = [], [], 0
    for start in range(0, n, chunk):  # first pass: the text of each chunk, and its size
        m = min(chunk, n - start)
        y, t, era, z = world.rows(m, rng)
        row, term, value = world.captions(y, era, rng)
        parts.append((y, t, z, row, term, value))
        nnz += m * (d + 1) + row.size
        labels.append(y)
    indptr = np.zeros(n + 1, dtype=np.int64)
    indices = np.empty(nnz, dtype=np.int32)
    data = np.empty(nnz, dtype=np.float32)
    start, at = 0, 0
    image_columns = np.arange(d, dtype=np.int32)
    for y, t, z, row, term, value in parts:
        m = len(y)
        image = world.image(z, rng)
        per_row = d + 1 + np.bincount(row, minlength=m)
        ends = at + np.cumsum(per_row)
        begins = ends - per_row
        indptr[start + 1:start + m + 1] = ends
        # image block: d consecutive entries from each row's start
        positions = begins[:, None] + image_columns[None, :]
        indices[positions] = image_columns
        data[positions] = image
        # text: after the image entries, in column order (unique keys are sorted by row, term)
        rank = np.arange(row.size) - np.repeat(np.cumsum(np.bincount(row, minlength=m))
                                               - np.bincount(row, minlength=m),
                                               np.bincount(row, minlength=m))
        text_at = begins[row] + d + rank
        indices[text_at] = d + term
        data[text_at] = value
        indices[ends - 1] = d + V  # the time column, last
        data[ends - 1] = t
        at, start = ends[-1], start + m
        del positions, image
    X = sparse.csr_matrix((data, indices, indptr), shape=(n, d + V + 1))
    return X, np.concatenate(labels)


def make_dense(world, n, seed, chunk=50_000):
    """The CLIP-sized dense float32 ``X = [image | text | time]`` of ``n`` items."""
    rng = np.random.default_rng(seed)
    d, e = world.sizes["image"], world.sizes["text"]
    X = np.empty((n, d + e + 1), dtype=np.float32)
    labels = []
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        y, t, era, z = world.rows(m, rng)
        X[start:start + m, :d] = world.image(z, rng)
        X[start:start + m, d:d + e] = z @ world.text_map + 0.5 * rng.standard_normal(
            (m, e), dtype=np.float32)
        X[start:start + m, -1] = t
        labels.append(y)
    return X, np.concatenate(labels)


def data_bytes(X):
    """Bytes of X's arrays (CSR: values, columns and row pointers)."""
    if hasattr(X, "indptr"):
        return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return X.nbytes


# ------------------------------------------------------------ the exact mAP
def reference_map_seconds(Zq, Zg, yq, yg, n_queries, block=256):
    """CPU seconds per query of the usual exact AP: one matmul per block of queries, one
    ``argsort`` of each row, the precision at each relevant rank; and the mean AP of those
    queries (to check the library's figure on the same queries)."""
    start = time.process_time()
    aps = []
    ranks = np.arange(1, Zg.shape[0] + 1)
    for s in range(0, n_queries, block):
        e = min(s + block, n_queries)
        S = Zq[s:e] @ Zg.T
        order = np.argsort(-S, axis=1)
        relevant = yg[order] == yq[s:e, None]
        hits = np.cumsum(relevant, axis=1)
        aps.append((relevant * hits / ranks).sum(axis=1) / relevant.sum(axis=1))
    return (time.process_time() - start) / n_queries, np.concatenate(aps)


# ------------------------------------------------------------------ one case
def run_case(case, sizes, train_batches):
    import torch

    from temporal_xmodal import DiachronicEmbedder
    from temporal_xmodal.metrics import cross_modal_scores, mean_average_precision
    torch.set_num_threads(2)
    baseline = _status("VmRSS")
    world = World(sizes, seed=0)
    start = time.perf_counter()
    if case == "paper":
        X, y = make_csr(world, sizes["n_train"], seed=1)
        X_test, y_test = make_csr(world, sizes["n_test"], seed=2)
        d = sizes["image"]
    else:
        X, y = make_dense(world, sizes["n_train"], seed=1)
        X_test, y_test = make_dense(world, sizes["n_test"], seed=2)
        d = sizes["image"]
    build_seconds = time.perf_counter() - start
    size = data_bytes(X) + data_bytes(X_test)
    print(f"  data built in {build_seconds:.0f} s: {size / GIB:.2f} GiB "
          f"({'CSR' if case == 'paper' else 'dense float32'}), resident "
          f"{(_status('VmRSS') - baseline) / GIB:.2f} GiB", flush=True)

    scoring = time_retrieval_scoring()
    if train_batches:
        import temporal_xmodal.estimators._neural as neural

        neural.BatchIterator = truncated_iterator(train_batches)
    est = DiachronicEmbedder(max_epochs=1, batch_size=64, device="cpu",
                             validation_fraction=0.1, n_image_features=d, random_state=0)
    reset_peak()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    fit_seconds = time.perf_counter() - t0
    fit_peak = _status("VmHWM") - baseline
    history = est.net_.history[-1]
    n_fit_rows = X.shape[0]
    n_train_rows = n_fit_rows - int(round(0.1 * n_fit_rows))
    batches_total = -(-n_train_rows // 64)
    batches_run = min(train_batches, batches_total) if train_batches else batches_total
    epoch_seconds = history["dur"]

    t0 = time.perf_counter()
    Z = est.transform(X_test)
    embed_seconds = time.perf_counter() - t0
    D = Z.shape[1] // 2
    Zi, Zt = np.ascontiguousarray(Z[:, :D]), np.ascontiguousarray(Z[:, D:])
    t0, c0 = time.perf_counter(), time.process_time()
    exact = cross_modal_scores(Zi, Zt, y_test, metrics=("map",), n_jobs=-1)
    map_seconds, map_cpu = time.perf_counter() - t0, time.process_time() - c0
    queries = min(2000, len(y_test))
    ref_per_query, ref_ap = reference_map_seconds(Zi, Zt, y_test, y_test, queries)
    ours = mean_average_precision(Zi[:queries], Zt, y_test[:queries], y_test,
                                  return_per_query=True)[1]
    agree = float(np.max(np.abs(ours - ref_ap)))
    peak_all = _status("VmHWM") - baseline
    return {
        "case": case, "sizes": sizes, "threads": torch.get_num_threads(),
        "data_bytes": size, "data_build_seconds": build_seconds,
        "fit_peak_minus_start": fit_peak, "fit_peak_over_data_gib": (fit_peak - size) / GIB,
        "peak_minus_start_all": peak_all,
        "fit_seconds": fit_seconds, "epoch_seconds": epoch_seconds,
        "train_batches_run": batches_run, "train_batches_epoch": batches_total,
        "valid_map_seconds": scoring["seconds"], "valid_map": history.get("valid_map"),
        "train_loss": history.get("train_loss"),
        "test_embed_seconds": embed_seconds,
        "exact_map": exact["map"], "exact_map_i2t": exact["map_i2t"],
        "exact_map_t2i": exact["map_t2i"], "exact_map_seconds": map_seconds,
        "exact_map_cpu_seconds": map_cpu,
        "reference_cpu_seconds_per_query": ref_per_query,
        "reference_cpu_seconds_both_directions": 2 * ref_per_query * len(y_test),
        "reference_queries": queries, "reference_max_ap_difference": agree,
    }


def main():
    parser = make_parser(__doc__.split("\n", 1)[0])
    parser.add_argument("--case", choices=("paper", "clip"), required=False)
    parser.add_argument("--train-batches", type=int, default=400,
                        help="training batches run of the epoch (0: all); default 400")
    args = parser.parse_args()
    cases = [args.case] if args.case else ["paper", "clip"]
    path = args.output_dir / f"{NAME}.json"
    previous = (json.loads(path.read_text()).get("results", {})
                if path.exists() and not args.quick else {})
    results = dict(previous)
    for case in cases:
        sizes = QUICK[case] if args.quick else (PAPER if case == "paper" else CLIP)
        print_header(f"{case}: {sizes}")
        r = run_case(case, sizes, 0 if args.quick else args.train_batches)
        results[case] = r
        for key, value in r.items():
            if key != "sizes":
                print(f"  {key}: {value}")
    targets = {}
    for case, r in results.items():
        # the epoch: its training batches scaled to all of them, plus its validation (the
        # validation loss pass, estimated as the test embedding's time per row, and the
        # valid_map scoring), counted once
        n_valid = int(round(0.1 * r["sizes"]["n_train"]))
        valid_pass = r["test_embed_seconds"] * n_valid / r["sizes"]["n_test"]
        training = max(0.0, r["epoch_seconds"] - r["valid_map_seconds"] - valid_pass)
        scale = r["train_batches_epoch"] / max(1, r["train_batches_run"])
        r["validation_seconds"] = r["valid_map_seconds"] + valid_pass
        r["train_seconds_per_batch"] = training / max(1, r["train_batches_run"])
        r["epoch_seconds_extrapolated"] = training * scale + r["validation_seconds"]
        r["twenty_five_epochs_hours"] = 25 * r["epoch_seconds_extrapolated"] / 3600
        targets[f"{case}_fit_peak"] = target(r["fit_peak_over_data_gib"], 2.0, "<",
                                             "fit peak RSS - data, GiB (target < 2)")
        targets[f"{case}_exact_map_vs_reference"] = target(
            r["exact_map_cpu_seconds"] / r["reference_cpu_seconds_both_directions"], 1.5, "<",
            "exact coarse mAP CPU s / the block matmul + argsort reference's (target < 1.5)")
    print_targets(targets)
    write_results(NAME, {"quick": args.quick, "results": results, "targets": targets},
                  args.output_dir)


if __name__ == "__main__":
    main()
