"""Running: a loaded extension -> launches, as `ct.launch` makes them, and handles that keep
cuTile Rust's ownership rules. Needs nothing from the translating side."""
