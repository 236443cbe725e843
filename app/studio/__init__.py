"""The narration studio: a project of segments to render, hear, fix, pace and export."""
