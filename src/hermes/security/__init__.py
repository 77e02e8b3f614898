"""Secret redaction and the stdio environment allowlist."""
