"""Trust, a feature: keys and signatures, signing a registry's reruns, community attestations.

May import: the layers below the features (core, rules, format, registry, state, operations, facts);
never another feature.
"""
