"""The spec's rules over one row: datasets, question bodies, answers, identity, strict validation (S1-S5).

The bottom wing: it imports no other wing.
"""
