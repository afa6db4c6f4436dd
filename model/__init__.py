"""SPIN models of the queue and workflow protocols; ``python -m model.check`` runs them."""
