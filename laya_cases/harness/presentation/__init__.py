"""Presentation checks (spec S7.9-S7.12): does a model favour the first option slot? Label-free.

The fixed inputs are data (data/presentation_states.json: 10 English support-message states and the
instructions `How urgent is this request?`); `inputs` turns them into one dataset row per state with
12 score questions, qid `<check>/<configuration>`:

* `score_slot0_identical/<text>/<K>`: K in {3, 4, 5} levels that all read `moderate` or `a request`
  (6 configurations): a model without a slot preference has z0 - mean(z) = 0.
* `score_first_slot_permuted/<order>`: the levels `Not urgent`, `Soon`, `Work is blocked` in each of
  the 6 orders (order `201` shows level 2 in slot 0): an order-invariant model picks slot 0 in
  exactly 1/3 of them.

`harness` runs a runner over them and commits a run whose decisions carry the raw logits and the
temperature (a runner that exposes none is refused, exit 2, nothing written); `checks` computes the
verdict from the store (sql/presentation/), so `--run RUN` re-derives it with no model.
"""
