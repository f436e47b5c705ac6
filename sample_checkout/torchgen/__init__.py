"""opindex sample: the code generator package."""
