"""The local cloud's own test suite: it deploys only the fixture apps under ``fixtures/``
and runs the same from a checkout (``pytest localcloud/tests``) as from an installed wheel
(``python -m pytest --pyargs localcloud.tests``)."""
