"""The watcher: observe tool calls, distill confirmed facts, re-inject them by file.

Imported on the hook path: stdlib only, nothing at import time.
"""
