"""A tensor output (RMSNorm's) is checked by its digest as a gradient is: the error the record
states is the digest's estimate itself, allowed DIGEST_SLACK x rtol, never a share of it."""

import pytest

torch = pytest.importorskip("torch", reason="the timed-output check digests with torch")

from sitegen.rerun.checkparams import DIGEST_SLACK  # noqa: E402
from sitegen.rerun.timedcheck import TimedCheck  # noqa: E402

SHAPE = (16, 32)


def checked(rtol: float) -> dict:
    """One call whose output and gradient are the same wrong tensor, digested the same way."""
    gen = torch.Generator().manual_seed(5)
    ref = torch.randn(SHAPE, generator=gen, dtype=torch.float64)
    wrong = ref + 1e-3 * torch.randn(SHAPE, generator=gen, dtype=torch.float64)
    check = TimedCheck([SHAPE], "cpu", rtol, out_shape=SHAPE)
    check.out_projection = check.projections[0]  # one projection: the two estimates must then agree
    check.record(check.output(wrong), [wrong], None, None, redraw=lambda: (ref, (ref,)))
    return check.verify()


def test_a_tensor_output_s_error_is_stated_as_a_gradient_s_is():
    got = checked(1.0)
    assert got["worstLossRelError"] > 0
    assert got["worstLossRelError"] == pytest.approx(got["worstGradientRelError"], rel=1e-12)


def test_a_tensor_output_is_allowed_the_digest_slack_as_a_gradient_is():
    error = checked(1.0)["worstGradientRelError"]
    within = checked(error / (0.75 * DIGEST_SLACK))  # over rtol, inside the digest's allowance
    assert (within["lossFailures"], within["gradientFailures"]) == (0, 0)
    beyond = checked(error / (1.25 * DIGEST_SLACK))
    assert (beyond["lossFailures"], beyond["gradientFailures"]) == (1, 1)
