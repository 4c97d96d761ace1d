"""The timed_output check's parameters, shared by the check's two sides: timedcheck (which
digests the calls) and integrity (which judges them), and stated by protocol. A module of their
own so that neither imports the other's module for them (integrity and protocol used to import
each other).
"""

# The share of timed calls whose gradients are digested, the digest's dimension, and its
# allowance over rtol for the random projection.
CHECK_SHARE = 0.25
DIGEST_DIM = 8
DIGEST_SLACK = 2.0
