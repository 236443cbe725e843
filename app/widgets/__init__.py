"""The main window's parts, one file each."""
