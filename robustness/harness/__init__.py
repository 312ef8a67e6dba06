"""The robustness harness of dibs: a seeded fault schedule, a recorded ledger, an independent checker.

Nothing here imports or calls dibs to decide what is true: the servers are read over RESP by
`resp.py`, the history is parsed from its documented format by `history.py`, and the ledger is the
harness's own. See docs/reliability.md, "The robustness harness".
"""
