"""The registry as the site sees it: each run with its documents, cohort, level, interval and rank."""
