"""How values, units, labels and escaped text are written on every page and file."""
