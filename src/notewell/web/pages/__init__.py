"""The web door's routes, one module per area; each exports ROUTES."""
