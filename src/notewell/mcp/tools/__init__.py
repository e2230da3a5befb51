"""One module per toolset; each defines TOOLSET and is listed once in notewell.mcp.registry."""
