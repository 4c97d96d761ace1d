"""`sitegen rerun --self-test`: planted cheating implementations, each of which a named check must refuse."""
