"""The embedded local cloud: template.yaml deployed into moto, real handlers, no Docker.

A development tool; never deployed (it is outside ``CodeUri: src/``).
"""
