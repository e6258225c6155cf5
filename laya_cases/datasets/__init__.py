"""Dataset builders from the stored public benchmarks (MASSIVE, ...): rows in the S1 format."""
