"""Simulators (schedulers, allocators): pure functions, tested by hand."""
