"""Answers in words for an AI assistant's model: figures spelled out (억원/만원) and the
short narration beside each MCP answer."""
