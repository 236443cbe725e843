"""engine.caches"""
