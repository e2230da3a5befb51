"""The REST door: /api/v1, FastAPI routers over the services, described by an OpenAPI document."""
