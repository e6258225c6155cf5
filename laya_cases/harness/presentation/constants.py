"""The presentation checks' fixed settings: check names, level texts, thresholds (S7.9-S7.12)."""
SLOT0 = "score_slot0_identical"
FIRST_SLOT = "score_first_slot_permuted"
SLOT0_TEXTS = ("moderate", "a request")
SLOT0_SIZES = (3, 4, 5)
LEVELS = ("Not urgent", "Soon", "Work is blocked")
THRESHOLDS = {SLOT0: -0.20, FIRST_SLOT: 0.15}
PARITY_TOLERANCE = 1e-3
SCHEMA = "laya-presentation-checks/1"
