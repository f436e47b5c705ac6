__version__ = "2.4.0a0+sample"
git_version = "0000000"
