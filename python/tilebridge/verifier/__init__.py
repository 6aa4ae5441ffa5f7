"""Verifying: the Rust twins against cuTile Python (numbers, Tile IR, speed, coverage)."""
