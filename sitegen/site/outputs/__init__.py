"""The files beside the pages: catalog, CSV downloads, feeds, badges, search index, sitemap."""
