"""Helpers shared by the tests, one module per subject; test files import from here, never
from each other or from ``conftest.py`` (which holds only fixtures)."""
