"""The timed-output check's rules on small CPU tensors (timedcheck.py's docstring, the protocol's
notes): the first ALWAYS_CHECKED calls and then a CHECK_SHARE of them are checked; a digest is
Σ_r W_rk (dX R)_rk, a row chunk at a time; a loss is wrong past rtol, a digest past
DIGEST_SLACK x rtol; an output that is not a plain tensor, or shares an input's memory, is named.
"""

import math

import pytest

torch = pytest.importorskip("torch", reason="the timed-output check digests with torch")

from sitegen.rerun.checks import timedcheck  # noqa: E402
from sitegen.rules.checkparams import CHECK_SHARE, DIGEST_DIM, DIGEST_SLACK  # noqa: E402
from sitegen.rerun.checks.timedcheck import TimedCheck, aliasing, as_matrix, digest, foreign, modes  # noqa: E402

SHAPE = (6, 5)


def _t(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_a_digest_is_the_weighted_projection_of_every_row_chunked_or_not(monkeypatch):
    grad, proj, weights = _t(*SHAPE, seed=1), _t(SHAPE[1], DIGEST_DIM, seed=2), _t(SHAPE[0], DIGEST_DIM, seed=3)
    want = (weights * (grad @ proj)).sum(dim=0)
    assert torch.allclose(digest(grad, proj, weights), want, rtol=1e-12, atol=0)
    monkeypatch.setattr(timedcheck, "_CHUNK_ELEMENTS", 2 * SHAPE[1])  # two rows a chunk: three chunks
    assert torch.allclose(digest(grad.float(), proj, weights), (weights * (grad.float().double() @ proj)).sum(dim=0),
                          rtol=1e-12, atol=0)
    monkeypatch.setattr(timedcheck, "_CHUNK_ELEMENTS", 1)  # fewer elements than a row: a row a chunk
    assert torch.allclose(digest(grad, proj, weights), want, rtol=1e-12, atol=0)
    assert digest(grad, proj, weights).dtype == torch.float64


@pytest.mark.parametrize("shape, matrix", [((), (1, 1)), ((7,), (1, 7)), ((4, 3), (4, 3)), ((4, 3, 2), (4, 6))])
def test_a_gradient_is_digested_as_first_dim_by_the_rest(shape, matrix):
    assert as_matrix(shape) == matrix


def test_only_a_plain_tensor_with_no_mode_left_active_is_read():
    active = modes()
    assert foreign(torch.zeros(()), active) is None and foreign(None, active) is None

    class Lazy(torch.Tensor):
        pass

    assert foreign(torch.zeros(()).as_subclass(Lazy), active) == "returned a Lazy, not a plain torch.Tensor"
    assert foreign(3.0, active) == "returned a float, not a plain torch.Tensor"

    class Mode(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    with Mode():
        assert modes() == (active[0] + 1, active[1])
        assert foreign(torch.zeros(()), active) == "left a torch function or dispatch mode active"


def test_an_output_sharing_an_input_s_memory_is_named():
    x, y = _t(*SHAPE), _t(*SHAPE, seed=1)
    assert aliasing((x, y), [torch.zeros(()), None, y[1:]]) == "gradient 1 shares memory with input 1"
    assert aliasing((None, y), [x.view(-1)[:1], 2.0]) is None
    assert aliasing((x, y), [x.view(-1)[0]]) == "the loss shares memory with input 0"


def test_the_first_calls_are_always_checked_and_then_a_share_of_them():
    check = TimedCheck([SHAPE], "cpu", 1e-3)
    draws = iter([CHECK_SHARE - 1e-9, CHECK_SHARE, 0.9])
    picked = []
    for _ in range(timedcheck.ALWAYS_CHECKED + 3):
        picked.append(check.pick(_uniform=lambda: next(draws)))
        if picked[-1] and len(check.calls) < timedcheck.ALWAYS_CHECKED:
            check.calls.append(None)
    assert picked == [True] * timedcheck.ALWAYS_CHECKED + [True, False, False]


def test_a_scalar_loss_is_kept_in_float64_and_anything_else_reads_nan():
    check = TimedCheck([SHAPE], "cpu", 1e-3)
    kept = check.output(torch.tensor([1.5], dtype=torch.float32))
    assert kept.dtype == torch.float64 and kept.shape == () and float(kept) == 1.5
    for out in (None, 1.5, torch.zeros(2)):
        assert math.isnan(float(check.output(out)))
    tensor = TimedCheck([SHAPE], "cpu", 1e-3, out_shape=SHAPE)
    bad = tensor.output(torch.zeros(3))
    assert bad.shape == (DIGEST_DIM,) and bool(torch.isnan(bad).all())


class _Window:
    def __init__(self, ns):
        self.ns = ns

    def stream_ns(self):
        return self.ns


def _verify(loss, ref_loss, grad, ref, rtol, windows=(None, None)):
    check = TimedCheck([SHAPE], "cpu", rtol)
    check.record(check.output(loss), [grad], *windows, redraw=lambda: (torch.tensor(ref_loss, dtype=torch.float64), (ref,)))
    return check


def test_a_loss_is_wrong_past_rtol_and_a_gradient_past_its_digest_slack():
    ref = _t(*SHAPE, seed=4)
    ok = _verify(torch.tensor(2.0), 2.0, ref.clone(), ref, 0.1).verify()
    assert (ok["lossFailures"], ok["gradientFailures"], ok["worstLossRelError"], ok["worstGradientRelError"]) == (0, 0, 0.0, 0.0)
    at = _verify(torch.tensor(2.5), 2.0, ref.clone(), ref, 0.25).verify()  # |0.5| / 2 = rtol exactly
    assert at["lossFailures"] == 0 and at["worstLossRelError"] == 0.25
    over = _verify(torch.tensor(2.5), 2.0, ref.clone(), ref, 0.2).verify()
    assert over["lossFailures"] == 1 and over["gradientFailures"] == 0
    assert _verify(torch.tensor(2.0), -2.0, ref.clone(), ref, 1.5).verify()["worstLossRelError"] == 2.0  # |ref|
    # The gradient's digest error, against DIGEST_SLACK x rtol.
    wrong = ref * 1.01
    check = _verify(torch.tensor(2.0), 2.0, wrong, ref, 1.0)  # one draw of projections, judged under two rtols
    error = check.verify()["worstGradientRelError"]
    assert 0.001 < error < 0.1  # the digest estimates the 1% error
    check.rtol = error / DIGEST_SLACK * 1.01
    assert check.verify()["gradientFailures"] == 0
    check.rtol = error / DIGEST_SLACK * 0.99
    assert check.verify()["gradientFailures"] == 1


def test_an_unwritten_loss_or_a_missing_gradient_is_wrong_and_the_error_capped_for_json():
    ref = _t(*SHAPE, seed=4)
    nan = _verify(torch.tensor(float("nan")), 2.0, ref.clone(), ref, 1e9).verify()
    assert nan["lossFailures"] == 1 and nan["worstLossRelError"] == 1e300
    check = TimedCheck([SHAPE], "cpu", 1e9)
    check.record(check.output(torch.tensor(2.0)), [None], None, None,
                 redraw=lambda: (torch.tensor(2.0, dtype=torch.float64), (ref,)))
    missing = check.verify()
    assert missing["gradientFailures"] == 1 and missing["worstGradientRelError"] == 1e300
    nan_grad = _verify(torch.tensor(2.0), 2.0, torch.full(SHAPE, float("nan"), dtype=torch.float64), ref, 1e9).verify()
    assert nan_grad["gradientFailures"] == 1 and nan_grad["worstGradientRelError"] == 1e300


def test_without_a_tolerance_nothing_finite_is_wrong():
    ref = _t(*SHAPE, seed=4)
    assert _verify(torch.tensor(9.0), 2.0, ref * 3, ref, None).verify()["lossFailures"] == 0


def test_a_tensor_output_s_error_is_its_digest_s_on_the_reference_norm():
    ref = _t(*SHAPE, seed=4)
    check = TimedCheck([SHAPE], "cpu", 1.0, out_shape=SHAPE)
    assert check._output_error(check.output(ref.clone()), ref) == 0.0
    assert check._output_error(torch.full((DIGEST_DIM,), float("nan"), dtype=torch.float64), ref) == math.inf
    proj, weights = check.out_projection
    off = ref * 1.5
    want = float(torch.linalg.vector_norm(digest(off, proj, weights) - digest(ref, proj, weights))) / (
        math.sqrt(DIGEST_DIM) * float(torch.linalg.vector_norm(ref)))
    assert check._output_error(check.output(off), ref) == pytest.approx(want, rel=1e-12)


def test_the_summary_counts_every_call_and_keeps_the_first_reasons_and_full_pass_times():
    ref = _t(*SHAPE, seed=4)
    check = _verify(torch.tensor(2.0), 2.0, ref.clone(), ref, 0.1, windows=(_Window(300), _Window(700)))
    check.record(check.output(torch.tensor(2.0)), [ref.clone()], _Window(0), _Window(0),
                 redraw=lambda: (torch.tensor(2.0, dtype=torch.float64), (ref,)))
    check.record(check.output(torch.tensor(2.0)), [ref.clone()], _Window(5), None,
                 redraw=lambda: (torch.tensor(2.0, dtype=torch.float64), (ref,)))
    check.record_loss()
    check.record_foreign("first")
    check.record_foreign("second")
    check.record_inputs("input 0")
    check.record_inputs("input 1")
    got = check.verify()
    assert got == {"calls": 6, "checkedGradients": 3, "foreignOutputs": 2, "foreignReason": "first",
                   "inputsReason": "input 0", "lossFailures": 0, "gradientFailures": 0, "worstLossRelError": 0.0,
                   "worstGradientRelError": 0.0, "fullPassNs": [1000, 1]}


def test_the_projections_are_float64_drawn_from_a_secret_seed_with_a_weight_per_row_and_direction():
    torch.manual_seed(0)
    one = TimedCheck([SHAPE], "cpu", 1e-3, out_shape=(3, 4))
    torch.manual_seed(0)
    two = TimedCheck([SHAPE], "cpu", 1e-3, out_shape=(3, 4))
    (proj, weights), (out_proj, out_weights) = one.projections[0], one.out_projection
    assert proj.shape == (SHAPE[1], DIGEST_DIM) and weights.shape == (SHAPE[0], DIGEST_DIM)
    assert out_proj.shape == (4, DIGEST_DIM) and out_weights.shape == (3, DIGEST_DIM)
    assert all(t.dtype == torch.float64 for t in (proj, weights, out_proj, out_weights))
    # Not torch's global generator, which code in the process can seed or read: two checks
    # made after the same global seed still draw their own directions.
    for a, b in zip((proj, weights, out_proj, out_weights), (*two.projections[0], *two.out_projection)):
        assert not torch.equal(a, b)


def test_a_kept_loss_is_a_copy_the_implementation_cannot_write_afterwards():
    check = TimedCheck([SHAPE], "cpu", 1e-3)
    out = torch.tensor(2.0, dtype=torch.float64)
    kept = check.output(out)
    out.fill_(9.0)
    assert float(kept) == 2.0


def test_errors_are_relative_to_the_reference_even_when_it_is_small():
    ref = _t(*SHAPE, seed=4) * 1e-3
    assert _verify(torch.tensor(0.6), 0.5, ref.clone(), ref, 1.0).verify()["worstLossRelError"] == pytest.approx(0.2)
    grad = _verify(torch.tensor(0.5), 0.5, ref * 2, ref, 10.0).verify()["worstGradientRelError"]
    assert 0.3 < grad < 3  # the digest's estimate of a 100% error, not a thousandth of it
    check = TimedCheck([SHAPE], "cpu", 1.0, out_shape=SHAPE)
    assert 0.3 < check._output_error(check.output(ref * 2), ref) < 3


def test_every_wrong_call_is_counted_and_a_digest_exactly_at_its_allowance_passes():
    ref = _t(*SHAPE, seed=4)
    check = TimedCheck([SHAPE], "cpu", 0.1)
    for _ in range(2):
        check.record(check.output(torch.tensor(3.0)), [ref * 2], None, None,
                     redraw=lambda: (torch.tensor(2.0, dtype=torch.float64), (ref,)))
    got = check.verify()
    assert (got["lossFailures"], got["gradientFailures"]) == (2, 2)
    check.record_loss()
    check.record_loss()
    assert check.verify()["calls"] == 4
    at = _verify(torch.tensor(2.0), 2.0, ref * 1.01, ref, 1.0)
    error = at.verify()["worstGradientRelError"]
    at.rtol = error / DIGEST_SLACK  # DIGEST_SLACK x rtol is the error itself
    assert at.rtol * DIGEST_SLACK == error and at.verify()["gradientFailures"] == 0


def test_a_clean_check_states_no_reasons():
    ref = _t(*SHAPE, seed=4)
    got = _verify(torch.tensor(2.0), 2.0, ref.clone(), ref, 0.1).verify()
    assert got["foreignReason"] is None and got["inputsReason"] is None and got["foreignOutputs"] == 0
