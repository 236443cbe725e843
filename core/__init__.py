"""Chatterbox Desk's pipeline (no Qt): bundles, sessions, the decode loop, caches, streaming, CLI."""

import os

# onnxruntime >= 1.29 starts Microsoft telemetry when it is imported (a device id on disk, an upload at start-up).
# An offline narrator sends nothing: both spellings of the opt-out must be set before onnxruntime is imported.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ORT_TELEMETRY_DISABLED", "1")
