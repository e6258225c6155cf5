"""The shortlist and tournament report schemas, case statuses and defaults (S7.17-S7.20)."""
SHORTLIST_SCHEMA = "laya-shortlist-evals-report/1"
TOURNAMENT_SCHEMA = "laya-tournament-evals-report/1"
SHORTLIST_STATUSES = ("correct", "retrieval_miss", "decision_miss")
TOURNAMENT_STATUSES = ("correct", "elimination_miss", "final_choice_miss")
DEFAULT_K = 20
DEFAULT_GROUP_SIZE = 16
