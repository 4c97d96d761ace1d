"""The site, a feature: the facts rendered as static pages and files.

    build.py   one build: gather and validate, index, page models, render, write (MkDocs' shape)
    pages/     page models, one module per kind of page, and where each cohort's table goes
    charts/    SVG charts and trends        text/     labels, field names, units as printed
    outputs/   files besides pages: badges, feeds, search, downloads, the compare app's data
    engine/    incremental builds: fingerprints, what is up to date, workers, the atomic swap
    render.py  Jinja                        serve/    the local server that rebuilds on change
    writepages.py  which files the site holds: record pages (workers), then operation_files.py
               (one operation's group) and sitewide_files.py; dates.py the dates a site states

May import: the layers below the features (core, rules, format, registry, state, operations, facts);
never rerun, importers, trust or gate.
"""
