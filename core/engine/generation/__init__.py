"""engine.generation"""
