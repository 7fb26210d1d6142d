"""Presenting results: terminal tables and PNG plots of a run; the HTML report of a sweep or
suite (dataset → verdicts → content → figures → html)."""
