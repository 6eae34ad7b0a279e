"""adsrc/values"""
