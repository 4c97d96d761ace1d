"""sitegen: a static registry of GPU-kernel benchmark records."""
