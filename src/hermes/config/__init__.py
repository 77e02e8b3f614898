"""Configuration: the round-trip YAML store, the typed model, `.env` and `${VAR}` interpolation."""
