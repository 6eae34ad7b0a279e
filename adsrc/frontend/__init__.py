"""adsrc/frontend"""
