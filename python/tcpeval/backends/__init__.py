"""Backends answer a scenario with a Result of the same shape: for now the simulator."""
