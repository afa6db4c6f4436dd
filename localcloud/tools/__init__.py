"""The project's own tools, on top of the local cloud: the command line (:mod:`.cli` and
:mod:`.commands`: ``demo``, ``serve``, ``status``, ``invoke``, ``verify``, ``env-vars``,
``soak``, ``bench``; ``lab``, ``lab-env`` and ``lab-check`` in :mod:`.lab` and
:mod:`.lab_check`), the seed scenarios (:mod:`.scenarios`) and their run against a
deployed stack (:mod:`.verify`), the soak (:mod:`.soak`), the benchmark (:mod:`.bench`,
:mod:`.cold_start`, :mod:`.cost_model`, :mod:`.latency`, :mod:`.critical_path`, and the
contestants in ``bench_handlers/``), the rich rendering of their results
(:mod:`.report`) and the ``sam local invoke`` environment file (:mod:`.sam_local`).

May import: every package of the local cloud. Nothing imports it but ``__main__``.
"""
