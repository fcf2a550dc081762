"""Model loading, devices, timing, memory probes, generation: the measuring library."""
