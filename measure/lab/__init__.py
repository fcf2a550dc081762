"""What two or more experiments, or the runner, share: model loading, devices, timing,
memory probes, generation, quantizers, evaluation, the run's estimate and provenance;
and the budget formula with the config reader it uses (budget.py, model_config.py),
which the calculator's JavaScript mirrors and the browser tests hold equal."""
