"""Every output format, rendered from the report models."""
