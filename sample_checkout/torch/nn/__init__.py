from .modules import *  # noqa: F403
from .parameter import Parameter
from . import functional
