"""Published facts the budget is computed from (cards' datasheets, models' config.json
files): stated with their sources, never measured here."""
