"""Page models: what each page shows, as plain data, before any template."""
