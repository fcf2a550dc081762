"""Each page's figures, one module per experiment (``make section`` writes the next one here)."""
