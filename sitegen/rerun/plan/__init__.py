"""What a rerun measures, decided before any work: cases, which implementations (found without running them), which code, --like."""
