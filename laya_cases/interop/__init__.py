"""Other table libraries and hubs: Hugging Face datasets, pandas, polars; install hints for the extras.
"""
