"""Scripted stand-ins for the things ledger talks to over the network: model servers
speaking the real OpenAI chat-completions and Anthropic Messages protocols on
loopback, and a tiny command-line "LLM" that forwards its stdin to one of them.

Nothing here calls a real model; every answer is scripted by the test."""
