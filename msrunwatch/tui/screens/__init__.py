"""Screens pushed over the main one: a rank's detail, the keys."""
