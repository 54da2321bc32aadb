"""The live engine: tail, watch and judge a run as it grows."""
