"""A tensor output (RMSNorm's) is checked by its digest as a gradient is: the error the record
states is the digest's estimate itself, allowed DIGEST_SLACK x rtol, never a share of it."""

import pytest

torch = pytest.importorskip("torch", reason="the timed-output check digests with torch")

from sitegen.rules.checkparams import DIGEST_SLACK  # noqa: E402
from sitegen.rerun.checks.timedcheck import TimedCheck  # noqa: E402

SHAPE = (16, 32)


def checked(rtol: float) -> TimedCheck:
    """One call whose output and gradient are the same wrong tensor, digested the same way (each
    check draws its own projections: compare verdicts of one check, re-verified under another rtol)."""
    gen = torch.Generator().manual_seed(5)
    ref = torch.randn(SHAPE, generator=gen, dtype=torch.float64)
    wrong = ref + 1e-3 * torch.randn(SHAPE, generator=gen, dtype=torch.float64)
    check = TimedCheck([SHAPE], "cpu", rtol, out_shape=SHAPE)
    check.out_projection = check.projections[0]  # one projection: the two estimates must then agree
    check.record(check.output(wrong), [wrong], None, None, redraw=lambda: (ref, (ref,)))
    return check


def test_a_tensor_output_s_error_is_stated_as_a_gradient_s_is():
    got = checked(1.0).verify()
    assert got["worstLossRelError"] > 0
    assert got["worstLossRelError"] == pytest.approx(got["worstGradientRelError"], rel=1e-12)


def test_a_tensor_output_is_allowed_the_digest_slack_as_a_gradient_is():
    check = checked(1.0)
    error = check.verify()["worstGradientRelError"]
    check.rtol = error / (0.75 * DIGEST_SLACK)  # over rtol, inside the digest's allowance
    within = check.verify()
    assert (within["lossFailures"], within["gradientFailures"]) == (0, 0)
    check.rtol = error / (1.25 * DIGEST_SLACK)
    beyond = check.verify()
    assert (beyond["lossFailures"], beyond["gradientFailures"]) == (1, 1)
