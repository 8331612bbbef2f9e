"""HTTP adapter pieces: request context, bodies, negotiation and responses."""
