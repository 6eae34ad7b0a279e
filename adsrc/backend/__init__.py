"""adsrc/backend"""
