"""The MCP door: toolsets over Streamable HTTP and stdio, built on the official SDK's low-level server."""
