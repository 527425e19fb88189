"""Adapters: arena bots that speak another protocol to a program written for it (``acpc``) or that an LLM agent
drives through tool calls (``mcp``), and the engine wrapped for training (``pettingzoo``) (ARCHITECTURE.md,
"Adapters sit beside the SDK, outside the referee"). Each is built on the bots' SDK (``arena_sdk``) and the engine's
types only, and adds no path into the referee: to the referee an adapter is one more bot.
"""
