"""`sitegen rerun --ray`: one rerun spread over a Ray cluster's GPUs (driver, per-GPU task, progress report)."""
