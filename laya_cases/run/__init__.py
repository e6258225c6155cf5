"""Inference that writes decisions: the one run loop (execute.py), runner loading, resume, shards.
"""
