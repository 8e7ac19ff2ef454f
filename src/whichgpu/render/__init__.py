"""Renderers: JSON documents (stable, unit-bearing keys) and terminal tables (Rich, lazily)."""
