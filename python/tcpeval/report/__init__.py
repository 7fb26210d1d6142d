"""Presenting results: terminal tables and PNG plots."""
