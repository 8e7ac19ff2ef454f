"""Estimators: memory (this package's first concern); speed and cost come later."""
