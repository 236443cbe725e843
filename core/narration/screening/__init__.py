"""Screening rendered takes: what a take says (speech recognition) compared with the text it should say."""
