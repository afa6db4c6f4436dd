"""Helpers of the local cloud's own tests."""
