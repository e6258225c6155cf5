"""The binary relevance benchmark (spec S8, issue 10): manifests, one run per (model, language), metrics in
sql/relevance/, the four S8.9 CSVs, --pick-on operating points and a leaderboard with rank groups.
docs/relevance.md is the user's guide."""
