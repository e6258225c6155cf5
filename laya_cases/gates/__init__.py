"""Gates for CI (S5.5-S5.7, S6): thresholds, baselines, policies, their verdict lines and JUnit.
"""
