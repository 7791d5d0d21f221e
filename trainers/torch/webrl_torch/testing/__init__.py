"""Test utilities: a tiny randomly initialised Llama model built locally (nothing downloaded)."""
