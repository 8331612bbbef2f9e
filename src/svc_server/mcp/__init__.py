"""svc's MCP server (``svc mcp``, and ``/mcp`` of the bundled server): the API's
real-estate endpoints as read-only tools for AI assistants, each tool call one metered
API call. See docs/mcp.md."""
