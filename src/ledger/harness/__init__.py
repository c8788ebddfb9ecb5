"""Harness adapters: turn each agent harness's hook payloads into one event type.

Imported on the hook path: stdlib only, nothing at import time.
"""
