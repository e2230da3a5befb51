"""Notewell: a self-hosted knowledge and memory server for AI agents."""

__version__ = "0.1.0"
