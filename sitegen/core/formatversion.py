"""The record format version, kept free of imports so GPU-side code can use it without pydantic."""

API_VERSION = "kernelindex.dev/v1alpha1"
