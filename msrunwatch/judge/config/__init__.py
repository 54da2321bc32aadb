"""judge/config"""
