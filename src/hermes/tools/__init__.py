"""The tool surface a model sees: names, filters, toolsets, results and unavailable payloads."""
