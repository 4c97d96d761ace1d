"""The record format: the pydantic models (the schema), loading and validating a manifest file,
migrating older formats, and the JSON Schemas generated from the models (schemas/).

May import: sitegen.core, sitegen.rules.
"""
