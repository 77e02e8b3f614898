"""Portable plugins: the format, the enabled set, and (later) the installer."""
