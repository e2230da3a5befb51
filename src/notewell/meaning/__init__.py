"""Meaning: the packaged sentence-embedding model and the texts it embeds (docs/memory.md, "Meaning")."""
