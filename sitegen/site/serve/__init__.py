"""`sitegen serve`: rebuild on change, serve the site over HTTP on loopback."""
