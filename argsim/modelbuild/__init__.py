"""Recommended models of every task (`recipes`), built in sequence and resumably (`runner`), and the inventory
of trained models under the models folder (`inventory`)."""
