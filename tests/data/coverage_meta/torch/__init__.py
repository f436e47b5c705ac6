# opindex test checkout: the package
