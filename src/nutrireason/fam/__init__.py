"""FAM-Bench: food-as-medicine recommendation data, knowledge base and evaluation."""
