"""Where files live (user folders) and how they are written (atomically)."""
