"""The ten experiments, one module per page, in the chapter's order."""
