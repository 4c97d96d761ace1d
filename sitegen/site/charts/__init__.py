"""Sweep, history and sample charts as inline SVG, with the tables beside them."""
