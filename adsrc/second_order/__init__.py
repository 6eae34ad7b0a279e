"""adsrc/second_order"""
