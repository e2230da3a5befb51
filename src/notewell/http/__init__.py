"""The HTTP server: one ASGI application with every door mounted side by side and one lifespan.

``notewell.http.app`` assembles it (and lists the doors and background tasks), ``door`` says what a door
is, ``doors`` adapts each door's own package to that shape, ``tasks`` runs the background work.
"""
