"""The one inference thread: commands in, events out."""
