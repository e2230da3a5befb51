"""The web door: server-rendered pages for people (sign in, tokens and the install wizard, browse and search,
memories, admin), mounted at "/" beside /mcp.

``app`` builds the Starlette application, ``session`` the signed cookie session, CSRF and who is signed in,
``render`` the Jinja2 templates, ``pages/`` the routes (one module per area), ``clients`` the wizard's set-up
per client, ``installer`` the /install.sh script, ``markdown`` the sanitised rendering with line anchors.
Pages call the services only: the same permission decisions as MCP, and the same 404 for hidden and missing.
"""
