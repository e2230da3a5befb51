"""The MCP Python SDK's own server with one trivial tool, the peer of `notewell serve` in mcp_bench.py --versus-sdk.

An MCPServer (the SDK's high-level server, FastMCP before mcp 2) with one tool, ``echo``, which returns
its argument ``text``. Served over Streamable HTTP at /mcp by the SDK's own runner (``run``: anyio's
asyncio loop, uvicorn with its defaults), with JSON answers as Notewell's door gives them, no
authentication, and warning-level logging (no access line per request).

    .venv/bin/python bench/sdk_echo_server.py --port PORT
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import MCPServer


def echo(text: str) -> str:
    """Returns ``text``."""
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    server: MCPServer = MCPServer("sdk-echo", log_level="WARNING")
    server.tool()(echo)
    server.run("streamable-http", host="127.0.0.1", port=port, json_response=True)


if __name__ == "__main__":
    main()
