"""PyTorch knowledge shared by extraction (opindex.extract) and the query side (opindex.trace): devices, binding
shapes, plumbing ops. The bottom of the import graph: it imports nothing else of opindex."""
