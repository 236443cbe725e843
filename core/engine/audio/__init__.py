"""engine.audio"""
