"""engine.streaming"""
