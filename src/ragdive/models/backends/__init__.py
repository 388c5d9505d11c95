"""Provider backends, imported lazily by the registry."""
