"""Cohort statistics both verticals share: areas summed exactly, bulk sales counted as
one contract, mean and quartiles by one documented method, and the confidence ladder."""
