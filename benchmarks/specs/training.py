"""The neural training loop: the skorch wrapper's overhead and the losses' cost.

1. Overhead: ``SAMEmbedder.fit`` and ``TempXNetEmbedder.fit`` (recency) on
   ``make_temporal_crossmodal(6000)``, 5 epochs, no validation, no lr decay, inputs as they
   are, against a plain PyTorch loop doing the same work (the same module, loss object,
   optimiser, batch size and seeded order: the per-epoch losses are compared), best of 3
   interleaved after a warm-up; end to end and per epoch.  Target: wrapper / plain < 1.25.
2. Losses: median forward + backward of ``bidirectional_triplet_loss``, ``SAMLoss`` and
   ``TempXNetLoss`` at batches of 64 and 1,024.
3. A naive Python loop over every triplet (batch 64) against the vectorised loss: time
   ratio, and agreement of loss and gradients in float64 (target < 1e-5).

Threads: ``--threads`` (default 1 here).  Full run: about 35 s on 2 cores.
"""

import statistics
import time

import numpy as np
import torch
from sklearn import config_context
from sklearn.utils import check_random_state

from _common import print_header, target
from temporal_xmodal import SAMEmbedder, TempXNetEmbedder
from temporal_xmodal.datasets import make_temporal_crossmodal
from temporal_xmodal.estimators._neural import TrainingRows
from temporal_xmodal.estimators.sam import SAMLoss, SemanticDistance
from temporal_xmodal.estimators.tempxnet import RecencyCorrelation, TempXNetLoss
from temporal_xmodal.losses import bidirectional_triplet_loss, negative_mask
from temporal_xmodal.nn import TwoTowerNet, reseed

ESTIMATORS = {"sam": SAMEmbedder, "tempxnet": TempXNetEmbedder}

FULL = {"n_samples": 6000, "max_epochs": 5, "lr_decay": 0.0, "validation_fraction": 0.0,
        "repeats": 3, "threads": 1, "loss_batch_sizes": [64, 1024], "loss_repeats": 50,
        "loss_warmup": 3, "n_classes": 8, "sam_refresh_epoch": 60, "naive_batch_size": 64,
        "naive_repeats": 3, "seed": 0}
# the same losses and naive loop on smaller batches (the naive loop grows with the square)
QUICK = {**FULL, "n_samples": 300, "max_epochs": 1, "repeats": 1, "loss_repeats": 3,
         "loss_warmup": 1, "naive_repeats": 1, "loss_batch_sizes": [16, 256],
         "naive_batch_size": 16}
OVERHEAD_TARGET = 1.25
AGREEMENT_TOLERANCE = 1e-5
PROTOTYPE_CHUNK = 4096  # embed_batches' chunk size


def make_estimator(kind, params):
    """The estimator as benchmarked: default architecture, no validation, no lr decay, and
    the inputs as they are (``standardize=False``), as the plain PyTorch loop it is compared
    with takes them."""
    extra = {"correlation": "recency"} if kind == "tempxnet" else {}
    extra["standardize"] = False
    return ESTIMATORS[kind](
        **extra, max_epochs=params["max_epochs"], lr_decay=params["lr_decay"],
        validation_fraction=params["validation_fraction"], device="cpu",
        random_state=params["seed"], n_image_features=params["n_image_features"],
    )


def wrapper_fit(kind, X, y, params):
    """Time ``est.fit`` end to end; epoch durations and losses from the skorch history."""
    est = make_estimator(kind, params)
    start = time.perf_counter()
    est.fit(X, y)
    total = time.perf_counter() - start
    history = est.net_.history
    return {"total_s": total, "epoch_s": [float(d) for d in history[:, "dur"]],
            "train_loss": [float(v) for v in history[:, "train_loss"]]}


def _prototypes(model, data, labels):
    """Per-category mean embeddings from a no-grad eval pass (as ``ScheduledMargin``)."""
    model.eval()
    with torch.no_grad():
        z_img = torch.cat([model.embed_image(data["image"][s:s + PROTOTYPE_CHUNK])
                           for s in range(0, len(labels), PROTOTYPE_CHUNK)])
        z_txt = torch.cat([model.embed_text(data["text"][s:s + PROTOTYPE_CHUNK])
                           for s in range(0, len(labels), PROTOTYPE_CHUNK)])
    model.train()
    counts = labels.sum(0).clamp(min=1)[:, None]
    return (labels.T @ z_img) / counts, (labels.T @ z_txt) / counts


def plain_fit(kind, X, y, params):
    """The same training as ``est.fit`` in a minimal plain-PyTorch loop (timed end to end)."""
    start = time.perf_counter()
    est = make_estimator(kind, params)  # hyper-parameters and the loss recipe only
    n_img = params["n_image_features"]
    X_image, X_text, t = X[:, :n_img], X[:, n_img:-1], X[:, -1]
    Y = np.eye(y.max() + 1, dtype=np.float32)[y]  # the label indicator of the class codes
    seed = int(check_random_state(params["seed"]).randint(np.iinfo(np.int32).max))
    data = {"image": torch.as_tensor(X_image.astype(np.float32)),
            "text": torch.as_tensor(X_text.astype(np.float32)),
            "time": torch.as_tensor(t.astype(np.float32))}
    labels = torch.as_tensor(Y)
    # the estimator's own configuration of its loss (what its fit would build), from the
    # attributes a fit reads first
    est.n_image_features_, est.n_text_features_, est.uses_time_ = n_img, X_text.shape[1], True
    config = est._net_config(TrainingRows(X_image, X_text, t, Y > 0, None))
    criterion = config.criterion(**config.criterion_params)
    n, batch_size = len(labels), est.batch_size
    epoch_s, losses = [], []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TwoTowerNet(n_img, X_text.shape[1], hidden_dim=est.hidden_dim,
                            embedding_dim=est.embedding_dim, dropout=est.dropout)
        reseed(model, seed)  # dropout draws from the module's own generators, as in a fit
        if est.optimizer == "sgd":
            optimizer = torch.optim.SGD(model.parameters(), lr=est.lr, momentum=est.momentum,
                                        nesterov=bool(est.nesterov and est.momentum > 0))
        else:  # the estimator's default (Adam)
            optimizer = torch.optim.Adam(model.parameters(), lr=est.lr)
        generator = torch.Generator().manual_seed(seed)
        setup = time.perf_counter() - start
        model.train()
        for epoch in range(est.max_epochs):
            epoch_start = time.perf_counter()
            if isinstance(criterion, SAMLoss):
                criterion.refresh(epoch)
                if criterion.needs_prototypes:
                    criterion.refresh(epoch, *_prototypes(model, data, labels))
            order = torch.randperm(n, generator=generator)
            total = 0.0
            for s in range(0, n, batch_size):
                rows = order[s:s + batch_size]
                batch = {key: value[rows] for key, value in data.items()}
                optimizer.zero_grad()
                loss = criterion(model(**batch), labels[rows], batch)
                loss.backward()
                optimizer.step()
                total += loss.item() * len(rows)
            epoch_s.append(time.perf_counter() - epoch_start)
            losses.append(total / n)
    return {"total_s": time.perf_counter() - start, "setup_s": setup, "epoch_s": epoch_s,
            "train_loss": losses}


def warm_up(X, y, params):
    """One untimed 1-epoch run of both loops on a subset: lazy imports, first allocations.

    The first ``torch.optim`` optimiser of a process imports ``torch._dynamo``
    (about 1 s); whichever loop ran first would otherwise pay it.
    """
    small = dict(params, max_epochs=1)
    for kind in ESTIMATORS:
        wrapper_fit(kind, X[:400], y[:400], small)
        plain_fit(kind, X[:400], y[:400], small)


def overhead(kind, X, y, params):
    """Best-of-repeats wrapper vs plain timings of one estimator (interleaved runs)."""
    wrapper_runs, plain_runs = [], []
    for _ in range(params["repeats"]):
        wrapper_runs.append(wrapper_fit(kind, X, y, params))
        plain_runs.append(plain_fit(kind, X, y, params))
    n_trained = len(y) * params["max_epochs"]
    w_total = min(r["total_s"] for r in wrapper_runs)
    p_total = min(r["total_s"] for r in plain_runs)
    w_epoch = min(statistics.fmean(r["epoch_s"]) for r in wrapper_runs)
    p_epoch = min(statistics.fmean(r["epoch_s"]) for r in plain_runs)
    est = make_estimator(kind, params)
    loss_diff = max(abs(a - b) for r_w, r_p in zip(wrapper_runs, plain_runs)
                    for a, b in zip(r_w["train_loss"], r_p["train_loss"]))
    return {
        "timings": {
            f"{kind}_wrapper_fit_s": w_total,
            f"{kind}_plain_total_s": p_total,
            f"{kind}_wrapper_epoch_s": w_epoch,
            f"{kind}_plain_epoch_s": p_epoch,
        },
        "results": {
            "batch_size": est.batch_size,
            "hidden_dim": est.hidden_dim,
            "embedding_dim": est.embedding_dim,
            "dropout": est.dropout,
            "lr": est.lr,
            "momentum": est.momentum,
            "nesterov": bool(est.nesterov and est.momentum > 0),
            "batches_per_epoch": -(-len(y) // est.batch_size),
            "end_to_end_ratio": w_total / p_total,
            "epoch_ratio": w_epoch / p_epoch,
            "wrapper_samples_per_s_fit": n_trained / w_total,
            "plain_samples_per_s_total": n_trained / p_total,
            "wrapper_samples_per_s_epochs": len(y) / w_epoch,
            "plain_samples_per_s_epochs": len(y) / p_epoch,
            "wrapper_outside_epochs_s": min(r["total_s"] - sum(r["epoch_s"])
                                            for r in wrapper_runs),
            "plain_setup_s": min(r["setup_s"] for r in plain_runs),
            "per_batch_overhead_ms": 1e3 * (w_epoch - p_epoch) / -(-len(y) // est.batch_size),
            "wrapper_epoch_s_all_runs": [r["epoch_s"] for r in wrapper_runs],
            "plain_epoch_s_all_runs": [r["epoch_s"] for r in plain_runs],
            "wrapper_train_loss": wrapper_runs[-1]["train_loss"],
            "plain_train_loss": plain_runs[-1]["train_loss"],
            "train_loss_max_abs_diff": loss_diff,
        },
    }


def random_embeddings(gen, B, D, dtype=torch.float32):
    """Two random L2-normalised (B, D) leaves with ``requires_grad``."""
    def one():
        z = torch.nn.functional.normalize(torch.randn(B, D, generator=gen, dtype=dtype), dim=1)
        return z.requires_grad_()
    return one(), one()


def random_labels(gen, B, n_classes, multilabel=False):
    """(B, C) float indicator: one class per item, plus random extra labels if multilabel."""
    labels = torch.zeros(B, n_classes)
    labels[torch.arange(B), torch.randint(n_classes, (B,), generator=gen)] = 1.0
    if multilabel:
        labels = torch.maximum(labels, (torch.rand(B, n_classes, generator=gen) < 0.15).float())
    return labels


def random_batch(gen, B, params):
    """Raw image / text features and times of a batch (the synthetic data's widths)."""
    return {"image": torch.randn(B, params["n_image_features"], generator=gen),
            "text": torch.randn(B, params["n_text_features"], generator=gen),
            "time": 10 * torch.rand(B, generator=gen)}


def make_losses(params):
    """The three losses, fitted on random training data like the estimators fit them."""
    rng = np.random.default_rng(params["seed"])
    n = min(2000, params["n_samples"])  # full sizes: 2000
    X_image = rng.standard_normal((n, params["n_image_features"]))
    X_text = rng.standard_normal((n, params["n_text_features"]))
    t = 10 * rng.random(n)
    labels = np.eye(params["n_classes"], dtype=bool)[rng.integers(params["n_classes"], size=n)]
    sam = SAMLoss(n_epochs=100, semantic=SemanticDistance(random_state=0).fit(X_image, X_text))
    gen = torch.Generator().manual_seed(params["seed"])
    protos = [torch.nn.functional.normalize(torch.randn(params["n_classes"], 200, generator=gen),
                                            dim=1) for _ in range(2)]
    sam.refresh(params["sam_refresh_epoch"], *protos)
    recency = RecencyCorrelation().fit(t, labels, X_text)
    return sam, TempXNetLoss(correlation=recency)


def time_forward_backward(fn, z_img, z_txt, repeats, warmup):
    """Median wall time of ``fn(z_img, z_txt).backward()`` (gradients reset each call)."""
    times = []
    for i in range(warmup + repeats):
        z_img.grad = z_txt.grad = None
        start = time.perf_counter()
        fn(z_img, z_txt).backward()
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def loss_timing(params):
    """Median forward + backward time of each loss at each batch size."""
    sam, tempx = make_losses(params)
    results = {}
    for B in params["loss_batch_sizes"]:
        gen = torch.Generator().manual_seed(params["seed"] + B)
        labels = random_labels(gen, B, params["n_classes"])
        batch = random_batch(gen, B, params)
        cases = {
            "bidirectional_triplet_loss": (200, lambda zi, zt: bidirectional_triplet_loss(
                zi, zt, 1.0, negative_mask(labels), "sum_per_anchor")),
            "SAMLoss": (200, lambda zi, zt: sam((zi, zt), labels, batch)),
            "TempXNetLoss": (100, lambda zi, zt: tempx((zi, zt), labels, batch)),
        }
        for name, (D, fn) in cases.items():
            z_img, z_txt = random_embeddings(gen, B, D)
            # the losses' own per-batch path: no argument validation (the public
            # functions validate their options on every call; training does not)
            with config_context(skip_parameter_validation=True):
                seconds = time_forward_backward(fn, z_img, z_txt, params["loss_repeats"],
                                                params["loss_warmup"])
            results[f"{name}_b{B}"] = {"batch_size": B, "embedding_dim": D,
                                       "median_ms": 1e3 * seconds}
    return {"losses": results, "sam_alpha": float(sam.alpha)}


def naive_triplet_loss(z_image, z_text, labels, margin=1.0):
    """Bidirectional triplet hinge, one autograd expression per triplet (sum / B).

    Negatives of anchor i are the items sharing no label with i; for each,
    [m - <v_i, t_i> + <v_i, t_n>]_+ (image i -> texts) and
    [m - <v_i, t_i> + <v_n, t_i>]_+ (text i -> images).
    """
    label_sets = [set(torch.nonzero(row).flatten().tolist()) for row in labels]
    B = len(label_sets)
    total = z_image.new_zeros(())
    for i in range(B):
        positive = torch.dot(z_image[i], z_text[i])
        for n in range(B):
            if label_sets[i] & label_sets[n]:
                continue
            total = total + torch.relu(margin - positive + torch.dot(z_image[i], z_text[n]))
            total = total + torch.relu(margin - positive + torch.dot(z_image[n], z_text[i]))
    return total / B


def naive_reference(params, loss_res):
    """Agreement (float64 loss and gradients) and time ratio of the naive loop at batch 64."""
    B, D = params["naive_batch_size"], 200
    agreement = {}
    for case in ("single_label", "multilabel"):
        gen = torch.Generator().manual_seed(params["seed"] + 1)
        labels = random_labels(gen, B, params["n_classes"], multilabel=case == "multilabel")
        z_img, z_txt = random_embeddings(gen, B, D, dtype=torch.float64)
        values, grads = [], []
        for fn in (lambda: bidirectional_triplet_loss(z_img, z_txt, 1.0, negative_mask(labels)),
                   lambda: naive_triplet_loss(z_img, z_txt, labels, 1.0)):
            z_img.grad = z_txt.grad = None
            loss = fn()
            loss.backward()
            values.append(float(loss.detach()))
            grads.append((z_img.grad.clone(), z_txt.grad.clone()))
        agreement[case] = {
            "loss_vectorised": values[0],
            "loss_naive": values[1],
            "loss_abs_diff": abs(values[0] - values[1]),
            "grad_max_abs_diff": max(float((a - b).abs().max())
                                     for a, b in zip(grads[0], grads[1])),
            "triplets": int(2 * (labels @ labels.T == 0).sum()),
        }
    agreement["max_abs_diff"] = max(max(r["loss_abs_diff"], r["grad_max_abs_diff"])
                                    for r in agreement.values())

    gen = torch.Generator().manual_seed(params["seed"] + B)
    labels = random_labels(gen, B, params["n_classes"])
    z_img, z_txt = random_embeddings(gen, B, D)
    naive_s = time_forward_backward(lambda zi, zt: naive_triplet_loss(zi, zt, labels, 1.0),
                                    z_img, z_txt, params["naive_repeats"], 0)
    vectorised_s = loss_res["losses"][f"bidirectional_triplet_loss_b{B}"]["median_ms"] / 1e3
    return {"agreement": agreement, "batch_size": B, "embedding_dim": D,
            "naive_median_ms": 1e3 * naive_s, "vectorised_median_ms": 1e3 * vectorised_s,
            "speedup": naive_s / vectorised_s}


def evaluate_targets(over, naive):
    targets = {}
    for kind, r in over.items():
        targets[f"{kind}_epoch_overhead"] = target(
            r["results"]["epoch_ratio"], OVERHEAD_TARGET, "<",
            f"{kind}: wrapper / plain mean epoch time <= 1.25")
        targets[f"{kind}_fit_overhead"] = target(
            r["results"]["end_to_end_ratio"], OVERHEAD_TARGET, "<",
            f"{kind}: est.fit / plain loop end-to-end time <= 1.25")
    targets["loop_matches_vectorised"] = target(
        naive["agreement"]["max_abs_diff"], AGREEMENT_TOLERANCE, "<",
        "max |naive loop - vectorised| of loss and gradients (float64) < 1e-5")
    return targets


def arguments(parser):
    parser.set_defaults(threads=FULL["threads"])


def measure(args):
    params = dict(QUICK if args.quick else FULL, threads=args.threads)
    params["torch_num_threads"] = torch.get_num_threads()
    X, y, info = make_temporal_crossmodal(params["n_samples"], return_info=True,
                                          random_state=params["seed"])
    params.update(n_image_features=info.n_image_features, n_text_features=info.n_text_features)
    warm_up(X, y, params)
    over = {kind: overhead(kind, X, y, params) for kind in ESTIMATORS}
    loss_res = loss_timing(params)
    naive = naive_reference(params, loss_res)
    print_header("Wrapper / plain, per epoch and end to end")
    for kind, r in over.items():
        print(f"  {kind}: {r['results']['epoch_ratio']:.3f}, {r['results']['end_to_end_ratio']:.3f}"
              f"; max |train loss difference| {r['results']['train_loss_max_abs_diff']:.1e}")
    print(f"  naive loop / vectorised: {naive['speedup']:.0f}x; max |difference| "
          f"{naive['agreement']['max_abs_diff']:.1e}")
    timings = {k: v for r in over.values() for k, v in r["timings"].items()}
    timings.update({f"loss_{k}_ms": v["median_ms"] for k, v in loss_res["losses"].items()})
    timings[f"naive_triplet_b{naive['batch_size']}_ms"] = naive["naive_median_ms"]
    return {"parameters": params, "timings": timings,
            "results": {"overhead": {kind: r["results"] for kind, r in over.items()},
                        "losses": loss_res, "naive_reference": naive},
            "targets": evaluate_targets(over, naive)}
