"""adsrc/ir"""
