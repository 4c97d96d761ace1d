"""What a rerun measures, decided before any work: the request and its plan (request), cases, which implementations (found without running them), which code, --like."""
