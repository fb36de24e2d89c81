"""Recipes to foods: records, ingredient parsing, USDA matching, grams and nutrition."""
