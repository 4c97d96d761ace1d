"""The regression gate, a feature: a CI's new results compared with a registry's, one verdict per
workload.

May import: the layers below the features (core, rules, format, registry, state, operations, facts);
never another feature.
"""
