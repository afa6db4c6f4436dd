"""Order Guard's tooling, on top of the local cloud: what plays, checks, measures and
teaches the application (``src/order_guard``) on it, and on AWS.

- the command line (:mod:`.cli`, :mod:`.commands`: ``demo``, ``serve``, ``status``,
  ``invoke``, ``verify``, ``env-vars``, ``soak``, ``bench``, ``lab``, ``lab-env``,
  ``lab-check``) and the rich rendering of results (:mod:`.report`);
- Order Guard on the local cloud (:mod:`.cloud`: the stack from ``template.yaml`` and
  samconfig; :mod:`.decisions`: the workers' write decisions in the live view, handed in
  through :class:`localcloud.account.Extension`), its reads of orders and decisions
  (:mod:`.reads`), and fault injection through the local cloud's hooks (:mod:`.faults`);
- the seed scenarios (:mod:`.scenarios`) and their run against a deployed stack
  (:mod:`.verify`), the soak (:mod:`.soak`), the benchmark (:mod:`.bench`), the
  ``sam local invoke`` environment file (:mod:`.sam_local`), and the seed labs
  (:mod:`.labs`).

May import: :mod:`localcloud` and :mod:`order_guard`. Nothing of the local cloud or the
application imports it (``make lint`` checks both with lint-imports).
"""
