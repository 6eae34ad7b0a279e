"""adsrc/transforms"""
