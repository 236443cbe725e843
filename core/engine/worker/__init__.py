"""engine.worker"""
