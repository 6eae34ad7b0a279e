"""adsrc/api"""
