"""What makes a build incremental and puts the site in place: the fingerprint, the keys of
unchanged pages, the output folders and their swap."""
