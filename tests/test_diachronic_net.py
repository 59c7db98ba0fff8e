"""DiachronicNet: every item projected at the anchors' times (same-time negatives)."""

import pytest
import torch

import temporal_xmodal.estimators.diachronic._net as diachronic
from temporal_xmodal.estimators.diachronic import DiachronicNet


def _net(conditioning, k, **kw):
    torch.manual_seed(0)
    net = DiachronicNet(6, 5, 3, hidden_dim=16, time_dim=4, embedding_dim=8,
                        conditioning=conditioning, same_time_anchors=k, **kw)
    if conditioning == "film":  # leave the static start: the time must change the projection
        torch.nn.init.normal_(net.image_film.weight)
        torch.nn.init.normal_(net.text_film.weight)
    return net.train()


def _batch(n=10):
    g = torch.Generator().manual_seed(1)
    x, c, tf = (torch.randn(n, d, generator=g) for d in (6, 5, 3))
    tf[3] = tf[1]  # two anchors share a date: one projection serves both
    return x, c, tf


@pytest.mark.parametrize("conditioning", ["film", "concat"])
def test_scores_compare_each_anchor_with_the_batch_projected_at_its_time(conditioning):
    net = _net(conditioning, k=7)
    x, c, tf = _batch()
    z_image, z_text, s_it, s_ti = net(x, c, tf)
    assert s_it.shape == s_ti.shape == (7, 10)
    for a in range(7):
        at = tf[a].expand(10, -1)
        torch.testing.assert_close(s_it[a], net.embed_text(c, at) @ z_image[a])
        torch.testing.assert_close(s_ti[a], net.embed_image(x, at) @ z_text[a])
    # the own-time embeddings are unchanged, and differ from the same-time scores
    torch.testing.assert_close(z_image, net.embed_image(x, tf))
    assert not torch.allclose(s_it, (z_image @ z_text.T)[:7])


def test_time_dropout_candidates_are_projected_as_the_positive_was():
    net = _net("film", k=10, time_dropout=0.5)
    x, c, tf = _batch()
    net.time_layer.bias.data.zero_()  # zero time features embed to zero: the static path
    net.drop_time.reseed(3)
    z_image, z_text, s_it, s_ti = net(x, c, tf)
    # the positive is one of the candidates, projected the same way: no path shortcut
    torch.testing.assert_close(torch.diagonal(s_it), (z_image * z_text).sum(1))
    torch.testing.assert_close(torch.diagonal(s_ti), (z_image * z_text).sum(1))
    net.eval()  # the references: no time dropped
    static = torch.zeros(10, 3)
    kept_image = (z_image - net.embed_image(x, static)).abs().sum(1) > 1e-6
    kept_text = (z_text - net.embed_text(c, static)).abs().sum(1) > 1e-6
    assert 0 < kept_image.sum() < 10 and 0 < kept_text.sum() < 10
    assert (kept_image != kept_text).any()  # one draw per modality
    for a in range(10):  # candidates at the anchor's time, on its positive's path
        at = (tf[a] if kept_text[a] else static[a]).expand(10, -1)
        torch.testing.assert_close(s_it[a], net.embed_text(c, at) @ z_image[a])
        at = (tf[a] if kept_image[a] else static[a]).expand(10, -1)
        torch.testing.assert_close(s_ti[a], net.embed_image(x, at) @ z_text[a])


def test_zero_anchors_is_the_papers_forward():
    x, c, tf = _batch()
    out = _net("film", k=0)(x, c, tf)
    assert len(out) == 2


@pytest.mark.parametrize("conditioning", ["film", "concat"])
def test_block_by_block_projection_equals_one_pass(conditioning, monkeypatch):
    x, c, tf = _batch()
    grads = []
    for block in (diachronic._PAIR_BLOCK, 2 * 16 * 10):  # one pass; blocks of 2 times
        monkeypatch.setattr(diachronic, "_PAIR_BLOCK", block)
        net = _net(conditioning, k=10)
        out = net(x, c, tf)
        (out[2].square().sum() + out[3].sum()).backward()
        grads.append((out[2].detach(), [p.grad for p in net.parameters()]))
    torch.testing.assert_close(grads[0][0], grads[1][0])
    for a, b in zip(grads[0][1], grads[1][1]):
        torch.testing.assert_close(a, b)
