"""The interactive API reference at /api/v1/docs: Swagger UI, its files served from an installed package
(fastapi-offline ships them), so the page works with no internet access."""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.requests import Request
from starlette.responses import HTMLResponse

ASSETS_PACKAGE = "fastapi_offline"  # its static/ folder: swagger-ui-bundle.js, swagger-ui.css, favicon.png
ASSETS_PATH = "/docs-assets"


def install(app: FastAPI, prefix: str) -> None:
    app.mount(ASSETS_PATH, StaticFiles(directory=str(files(ASSETS_PACKAGE) / "static")), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def reference(_request: Request) -> HTMLResponse:
        assets = prefix + ASSETS_PATH
        return get_swagger_ui_html(
            openapi_url=f"{prefix}/openapi.json", title="Notewell REST API",
            swagger_js_url=f"{assets}/swagger-ui-bundle.js", swagger_css_url=f"{assets}/swagger-ui.css",
            swagger_favicon_url=f"{assets}/favicon.png",
            swagger_ui_parameters={"validatorUrl": None, "persistAuthorization": False, "tryItOutEnabled": True})
