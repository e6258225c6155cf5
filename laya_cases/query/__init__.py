"""The SQL library (sql/) over a store: loading, binding, the catalogue, engines, resampling, listings.
"""
