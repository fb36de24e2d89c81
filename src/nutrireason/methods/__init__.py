"""Prompting methods: each turns one benchmark item into model calls and a parsed answer."""

from nutrireason.methods.base import Method, Prediction, get_method, register_method

__all__ = ["Method", "Prediction", "get_method", "register_method"]
