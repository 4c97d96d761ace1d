"""Worker results turned into one outcome per case, and the documents a rerun writes into a registry."""
