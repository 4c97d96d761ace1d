"""The facts: the registry as its readers see it, computed from validated records before any page,
gate verdict or attestation uses them: each run with its documents, cohort, evidence level,
interval and rank; trends; which code is trusted.

A layer below the features: the site renders the facts, the gate judges a CI's runs by them and
attest reads a run's primary value from them. May import: core, rules, format, registry, state,
operations. One path-shaped fact lives here: each GPU's slug (index.path_slug, gpu_slugs), since runs
of GPUs whose names differ only in punctuation must be told apart wherever they are grouped; which
page a cohort's table is on is layout, and sitegen.site.pages.placement holds it.
"""
