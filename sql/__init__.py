"""The SQL metric library, shipped inside the wheel (read with importlib.resources)."""
