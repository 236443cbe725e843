"""engine.files"""
