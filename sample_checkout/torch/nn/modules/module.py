class Module:
    def __init__(self):
        self._parameters = {}
        self._buffers = {}
        self.training = True

    def register_parameter(self, name, param):
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        self._buffers[name] = tensor

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)
