"""``make bench``: Order Guard against the floor and the field (:mod:`.runner`), with the
cold start (:mod:`.cold_start`), DynamoDB's latency modelled (:mod:`.latency`), where a
batch's time goes outside the emulator (:mod:`.critical_path`), capacity units and the
billed INIT (:mod:`.cost_model`); the contestants' handlers are in ``handlers/``.
"""
