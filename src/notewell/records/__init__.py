"""Plain records: the values every layer passes around (identity, documents, memories, search plans).

The lowest layer: it imports nothing of notewell, so the store, access, search and the services can all
build on it without importing one another.
"""
